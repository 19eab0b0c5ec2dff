/**
 * Pino logger options (docs/operator-guide.md, "Logs"). Patient data never reaches the log, by
 * construction rather than by searching each line for it:
 *
 * - request bodies are never logged, and logged URLs keep only query parameter names;
 * - a log line may carry only the named fields in {@link LOGGABLE_FIELDS} at its top level (error
 *   summaries, event names, counts, ids of credentials and processes); any other field a call
 *   passes is dropped whole and only its name is kept under `dropped`, so an appointment or patient
 *   object handed to the logger by mistake never reaches the output;
 * - an `err` that is still an Error is reduced to its name, code and stack frames (its message can
 *   quote request values).
 *
 * This replaces a wildcard redaction list that pino walked on every line (about a quarter of the
 * CPU of a cheap read in the issue #20 profile); the check here looks at a line's top-level keys only.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';
import { loggableError } from '../lib/loggable-error.js';

/** The only top-level fields a log line may carry; each is safe by what the code puts in it. */
export const LOGGABLE_FIELDS: ReadonlySet<string> = new Set([
  // Fastify's request line (serialized below) and our error summaries.
  'req', 'res', 'responseTime', 'err', 'request_id',
  // Named events and their ids or counts.
  'event', 'client_id', 'code', 'signal', 'env', 'jobs', 'job', 'migrations', 'processes', 'worker_pid', 'sealed', 'tables', 'items',
  // A practice's schedule change (src/routes/practice/schedule): the kind of change, opaque ids of the
  // practice, the staff login and the directory rows changed, and a count. No patient is named by any.
  'change', 'practice_id', 'user_id', 'provider_id', 'provider_location_id', 'time_off_id', 'stranded_count',
  // An attachment whose stored bytes failed their check (docs/decisions/0016-attachment-files.md): its opaque id.
  'attachment_id',
  // The read replica's condition and lag when it changes (src/jobs/replica-lag.ts): a word and a number.
  'replica', 'lag_ms',
]);

/** Logs `path?name1&name2` without values: query values may carry patient identifiers. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = new URLSearchParams(url.slice(q + 1));
  return `${url.slice(0, q)}?${[...new Set(names.keys())].join('&')}`;
}

/** Keeps the named fields of a log line, summarises a raw Error, names what it dropped. */
export function safeLogFields(obj: Record<string, unknown>): Record<string, unknown> {
  let dropped: string[] | undefined;
  for (const key in obj) {
    if (!LOGGABLE_FIELDS.has(key)) (dropped ??= []).push(key);
  }
  const err = obj.err;
  if (!dropped && !(err instanceof Error)) return obj;
  const out: Record<string, unknown> = {};
  for (const key in obj) if (LOGGABLE_FIELDS.has(key)) out[key] = obj[key];
  if (err instanceof Error) out.err = loggableError(err);
  if (dropped) out.dropped = dropped;
  return out;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    formatters: { log: safeLogFields },
    serializers: {
      req(req: FastifyRequest) {
        return { method: req.method, url: redactUrl(req.url), remote: req.ip };
      },
      res(reply: FastifyReply) {
        return { statusCode: reply.statusCode };
      },
    },
  };
}
