/**
 * Fastify error and not-found handlers: every failure becomes a §7 body. A thrown bug is logged
 * by name, code and stack frames only (an error's message can quote patient data, so it is never
 * logged, nor is the request body) and answered as a bare 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorBody, type ErrorType, type FieldError } from './errors.js';
import { closeAfterAnswer } from './lingering-close.js';
import { trackRouteMethods } from './method-not-allowed.js';
import { requestFieldErrors } from './validation.js';

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
      if (err.statusCode === 413) closeAfterAnswer(req, reply);
      return sendError(reply, err.statusCode, err.errorType, err.errors, err.headers);
    }
    if (err.validation) {
      return sendError(reply, 400, 'invalid_request', requestFieldErrors(req, err.validation, err.validationContext));
    }
    const known = err.code ? CLIENT_ERRORS[err.code] : undefined;
    if (known) {
      // The body was not (fully) read: close the connection after answering (lingering, so the
      // answer is not lost to a reset), so a client still uploading cannot hold the socket open.
      if (known[0] === 413 || known[0] === 415) closeAfterAnswer(req, reply);
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
    if (typeof err.code === 'string' && INPUT_VALUE_SQLSTATES.has(err.code)) {
      // A value PostgreSQL cannot store or compute with (a NUL character, an out-of-range date or
      // number) came from the request: the client's error, not a 500 (found by test/security/fuzz.test.ts).
      return sendError(reply, 400, 'invalid_request', [{ message: 'the request contains a character or value that cannot be processed' }]);
    }
    if (isDatabaseUnavailable(err)) {
      req.log.error({ err: { message: err.message, code: err.code } }, 'database unavailable');
      return sendError(reply, 503, 'api_error', [{ message: 'service temporarily unavailable' }], { 'retry-after': '5' });
    }
    req.log.error({ err: loggableError(err) }, 'unhandled error');
    return sendError(reply, 500, 'api_error', [{ message: 'internal error' }]);
  });

  const methodsOf = trackRouteMethods(app);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const allowed = methodsOf(path);
    if (allowed.length) {
      return sendError(reply, 405, 'invalid_request', [{ message: `${req.method} is not supported here; use ${allowed.join(', ')}` }], { allow: allowed.join(', ') });
    }
    return sendError(reply, 404, 'invalid_request', [{ message: `no route for ${req.method} ${path}` }]);
  });
}

/**
 * SQLSTATEs of class 22 (data exception) that only a request's value can cause: 22021 invalid byte
 * sequence (a NUL character in text), 22P05 untranslatable character, 22003 numeric value out of
 * range, 22P02 invalid text representation (a malformed number, uuid or enum), 22007 invalid
 * datetime format, 22008 datetime field overflow.
 */
const INPUT_VALUE_SQLSTATES = new Set(['22021', '22P05', '22003', '22P02', '22007', '22008']);

/**
 * The parts of a thrown error that may be logged: its name, its code (a SQLSTATE or Fastify code)
 * and its stack frames. The message (also the first lines of `stack`) is left out: it can quote
 * request values, such as a patient's name or a rejected database value.
 */
export function loggableError(err: unknown): { name: string; code?: string; stack?: string } {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; stack?: unknown };
  const out: { name: string; code?: string; stack?: string } = { name: typeof e.name === 'string' ? e.name : typeof err };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = String(e.code);
  if (typeof e.stack === 'string') {
    const lines = e.stack.split('\n');
    const firstFrame = lines.findIndex((l) => /^\s+at /.test(l));
    if (firstFrame >= 0) out.stack = lines.slice(firstFrame).join('\n');
  }
  return out;
}

/** Connection-level database failures (server down, restarting): answered 503, not 500. */
export function isDatabaseUnavailable(err: { code?: string; message?: string }): boolean {
  const code = err.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(err.message ?? '')
  );
}
