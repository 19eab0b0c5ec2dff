/**
 * Fastify error and not-found handlers: every failure becomes a §7 body. A thrown bug is logged
 * (message and stack only, never the request body) and answered as a bare 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody, type ErrorType, type FieldError } from './errors.js';
import { fieldErrorsFromValidation } from './validation.js';

export function sendError(
  reply: FastifyReply,
  status: number,
  errorType: ErrorType,
  errors: FieldError[],
  headers: Record<string, string> = {},
): FastifyReply {
  const body: ErrorBody = { request_id: String(reply.request.id), error_type: errorType, errors };
  return reply.code(status).headers(headers).type('application/json; charset=utf-8').send(body);
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported content type'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'request body too large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'request body is empty'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'request body is not valid JSON'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid content-length'],
  FST_ERR_CTP_INVALID_CHARSET: [415, 'unsupported charset'],
  FST_ERR_BAD_URL: [400, 'malformed URL'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'invalid request'],
};

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      return sendError(reply, err.statusCode, err.errorType, err.errors, err.headers);
    }
    if (err.validation) {
      return sendError(reply, 400, 'invalid_request', fieldErrorsFromValidation(err.validation, err.validationContext));
    }
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined;
    if (known) {
      // The body was not (fully) read: close the connection after answering, so a client still
      // uploading cannot hold the socket (and a graceful shutdown) open.
      if (known[0] === 413 || known[0] === 415) reply.header('connection', 'close');
      return sendError(reply, known[0], 'invalid_request', [{ message: known[1] }]);
    }
    if (err instanceof SyntaxError && err.statusCode === 400) {
      return sendError(reply, 400, 'invalid_request', [{ message: 'request body is not valid JSON' }]);
    }
    if (err.statusCode === 429) {
      return sendError(reply, 429, 'api_error', [{ message: 'rate limit exceeded' }]);
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, err.statusCode, 'invalid_request', [{ message: 'invalid request' }]);
    }
    if (err.code && INPUT_VALUE_SQLSTATES.has(err.code)) {
      // A value PostgreSQL cannot store or compute with (a NUL character, an out-of-range date or
      // number) came from the request: the client's error, not a 500 (found by test/security/fuzz.test.ts).
      return sendError(reply, 400, 'invalid_request', [{ message: 'the request contains a character or value that cannot be processed' }]);
    }
    if (isDatabaseUnavailable(err)) {
      req.log.error({ err: { message: err.message, code: err.code } }, 'database unavailable');
      return sendError(reply, 503, 'api_error', [{ message: 'service temporarily unavailable' }], { 'retry-after': '5' });
    }
    req.log.error({ err: { message: err.message, stack: err.stack, code: err.code } }, 'unhandled error');
    return sendError(reply, 500, 'api_error', [{ message: 'internal error' }]);
  });

  app.setNotFoundHandler((req, reply) =>
    sendError(reply, 404, 'invalid_request', [{ message: `no route for ${req.method} ${req.url.split('?')[0]}` }]),
  );
}

/**
 * SQLSTATEs of class 22 (data exception) that only a request's value can cause: 22021 invalid byte
 * sequence (a NUL character in text), 22P05 untranslatable character, 22003 numeric value out of
 * range, 22008 datetime field overflow.
 */
const INPUT_VALUE_SQLSTATES = new Set(['22021', '22P05', '22003', '22008']);

/** Connection-level database failures (server down, restarting): answered 503, not 500. */
export function isDatabaseUnavailable(err: { code?: string; message?: string }): boolean {
  const code = err.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(err.message ?? '')
  );
}
