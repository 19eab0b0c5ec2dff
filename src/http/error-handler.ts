/**
 * Fastify error and not-found handlers: every failure becomes an error body (docs/api/errors.md#error-body). A thrown bug is logged
 * by name, code and stack frames only (an error's message can quote patient data, so it is never
 * logged, nor is the request body) and answered as a bare 500.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/unavailable.js';
import { DomainError, type FieldError } from '../domain/errors.js';
import { loggableError } from '../lib/loggable-error.js';
import { httpErrorOf, type ErrorType } from './domain-error-mapping.js';
import { closeAfterAnswer } from './lingering-close.js';
import { trackRouteMethods } from './method-not-allowed.js';
import { requestFieldErrors } from './validation.js';

/** The one error body of the API: `request_id` equals the `x-request-id` header (docs/api/errors.md). */
export interface ErrorBody {
  request_id: string;
  error_type: ErrorType;
  errors: FieldError[];
}

/** Answers `status` with the error body and `headers`. */
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

/** Installs the error handler and the not-found handler (405 with `Allow` for a path served under other methods). */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof DomainError) {
      const http = httpErrorOf(err);
      return sendError(reply, http.status, http.errorType, err.errors, http.headers);
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
