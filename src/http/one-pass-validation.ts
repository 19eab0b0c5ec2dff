/**
 * One answer names every bad field (docs/api/errors.md, "Validation"). A route checks a request in
 * three stages: its schema (types, lengths, enums), then rules a schema cannot say (phone digits,
 * real dates, field combinations), then references (an unknown plan, a time not offered). Fastify
 * stops at the first stage; a route that declares `config.alsoCheck` gets the later stages too:
 * when the schema fails, `alsoCheck` runs on the raw, unvalidated input and its errors join the
 * schema's in one 400. When the schema passes, the handler's own checks report the later stages.
 */
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError, preHandlerHookHandler } from 'fastify';
import { DomainError, invalidFields, mergeFieldErrors, type FieldError } from '../domain/errors.js';
import { loggableError } from '../lib/loggable-error.js';
import { requestFieldErrors } from './validation.js';

/** The checks after the schema, for input the schema refused: it may hold any JSON value anywhere. */
export type AlsoCheck = (req: FastifyRequest) => FieldError[] | Promise<FieldError[]>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Format and reference checks that also run when the schema fails (see `installOnePassValidation`). */
    alsoCheck?: AlsoCheck;
  }
}

/**
 * Gives every route registered after this call that declares `config.alsoCheck` one-pass
 * validation: the schema's failure is attached instead of thrown (`attachValidation`), and a first
 * preHandler (before Idempotency-Key and the handler) answers 400 with the schema's errors merged
 * with `alsoCheck`'s. A check that throws on odd input adds nothing; the schema's errors still answer.
 */
export function installOnePassValidation(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const check = (route.config as { alsoCheck?: AlsoCheck } | undefined)?.alsoCheck;
    if (!check) return;
    route.attachValidation = true;
    const pre: preHandlerHookHandler = async (req) => {
      const failed = req.validationError as (Error & { validation?: FastifySchemaValidationError[]; validationContext?: string }) | undefined;
      if (!failed) return;
      const schemaErrors = requestFieldErrors(req, failed.validation ?? [], failed.validationContext);
      let later: FieldError[] = [];
      try {
        later = await check(req);
      } catch (e) {
        if (e instanceof DomainError) later = e.kind === 'invalid' ? e.errors : [];
        else req.log.debug({ err: loggableError(e) }, 'later validation stage skipped on input the schema refused');
      }
      throw invalidFields(mergeFieldErrors(schemaErrors, later));
    };
    const existing = route.preHandler ? (Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler]) : [];
    route.preHandler = [pre, ...existing];
  });
}
