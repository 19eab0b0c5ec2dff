/**
 * The JSON body parser of every route (the API, the admin API and the auth server): Fastify's own
 * parser (secure-json-parse) refuses `__proto__` and `constructor.prototype` keys but answers
 * "not valid JSON", which is untrue. This one refuses them with a 400 that names the key and says
 * why (OWASP: prototype pollution), and answers malformed JSON as before.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import sjson from 'secure-json-parse';
import { invalidInput } from '../domain/errors.js';

/** The path of the first forbidden key in a parsed value (`JSON.parse` keeps `__proto__` as an own key). */
function forbiddenKeyPath(v: unknown, path: string): string | undefined {
  if (!v || typeof v !== 'object') return undefined;
  for (const key of Object.keys(v)) {
    const child = (v as Record<string, unknown>)[key];
    const here = path ? `${path}.${key}` : key;
    if (key === '__proto__') return here;
    if (key === 'constructor' && child && typeof child === 'object' && Object.prototype.hasOwnProperty.call(child, 'prototype')) return `${here}.prototype`;
    const deeper = forbiddenKeyPath(child, here);
    if (deeper) return deeper;
  }
  return undefined;
}

/**
 * Replaces the `application/json` parser of `app` (and the plugins registered after it).
 * `emptyBody`: what an empty body parses to (default: refused as empty).
 */
export function installJsonBodyParser(app: FastifyInstance, opts: { emptyBody?: unknown } = {}): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req: FastifyRequest, body: string, done) => {
    if (opts.emptyBody !== undefined && body.trim() === '') return done(null, opts.emptyBody);
    if (body.length === 0) return done(Object.assign(new Error('request body is empty'), { statusCode: 400, code: 'FST_ERR_CTP_EMPTY_JSON_BODY' }), undefined);
    try {
      done(null, sjson.parse(body, { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return done(Object.assign(new Error('request body is not valid JSON'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' }), undefined);
      }
      const field = forbiddenKeyPath(parsed, '') ?? '__proto__';
      done(invalidInput(field, 'key not allowed: __proto__ and constructor.prototype keys are refused in JSON bodies'), undefined);
    }
  });
}
