/**
 * Turns Ajv validation errors into the error body's field errors (docs/api/errors.md#validation), naming every bad field (Ajv runs with
 * `allErrors`) in every request part: Fastify stops at the first part that fails (params, body,
 * querystring, headers), so the parts after it are validated here too. Fields are dotted paths:
 * `data.patient.phone_number`, `page_size`, `gender[1]`.
 */
import type { FastifyRequest, FastifySchemaValidationError } from 'fastify';
import type { FieldError } from '../domain/errors.js';

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function describe(e: FastifySchemaValidationError): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return `must be at least ${String(p.limit)} characters`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'type':
      return `must be ${String(p.type)}`;
    case 'format':
      return `must be a valid ${String(p.format)}`;
    case 'pattern':
      return 'has an invalid format';
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minItems':
      return `must have at least ${String(p.limit)} items`;
    case 'additionalProperties':
      return 'is not allowed';
    case 'uniqueItems':
      return 'must not repeat a value';
    default:
      return e.message ?? 'is invalid';
  }
}

/** Keywords whose own message stays, even on a schema with an `x-error-message`. */
const GENERIC_KEYWORDS = new Set(['type', 'maxLength', 'minLength', 'maximum', 'minimum']);

/** One field error per Ajv error, de-duplicated, with the field named. */
export function fieldErrorsFromValidation(errors: FastifySchemaValidationError[], context?: string): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  // A union of literals fails with one `const` error per branch: report it once, as the allowed values.
  const constsByPath = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword === 'const') {
      const list = constsByPath.get(e.instancePath) ?? [];
      list.push((e.params as { allowedValue: unknown }).allowedValue);
      constsByPath.set(e.instancePath, list);
    }
  }
  for (const e of errors) {
    // anyOf/oneOf add a summary error after the branch errors; the branch errors say more.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const p = e.params as Record<string, unknown>;
    let path = pointerToPath(e.instancePath);
    // A schema with its own message (`x-error-message`, verbose Ajv errors carry the schema) names
    // the field it describes with that message: one clear error instead of a keyword's.
    const parent = (e as { parentSchema?: Record<string, unknown> }).parentSchema;
    const custom = parent?.['x-error-message'];
    // Not for the generic keywords: a 51-character name is too long, not blank.
    if (typeof custom === 'string' && !GENERIC_KEYWORDS.has(e.keyword)) {
      // `x-error-field`: the field a cross-field rule is about, as a path from the request part's root.
      if (typeof parent?.['x-error-field'] === 'string') path = parent['x-error-field'];
      const key = `${path}\u0000${custom}`;
      if (!seen.has(key)) {
        seen.add(key);
        out.push(path ? { field: path, message: custom } : { field: context ?? 'body', message: custom });
      }
      continue;
    }
    if (e.keyword === 'required') path = path ? `${path}.${String(p.missingProperty)}` : String(p.missingProperty);
    if (e.keyword === 'additionalProperties') {
      path = path ? `${path}.${String(p.additionalProperty)}` : String(p.additionalProperty);
    }
    const consts = e.keyword === 'const' ? constsByPath.get(e.instancePath) : undefined;
    const message = consts && consts.length > 1 ? `must be one of: ${consts.join(', ')}` : describe(e);
    const key = `${path}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(path ? { field: path, message } : { field: context ?? 'body', message });
  }
  return out.length ? out : [{ message: 'invalid request' }];
}

/** The parts Fastify validates, in its order (headers last; they are not re-validated here). */
const PARTS = ['params', 'body', 'querystring'] as const;
type Part = (typeof PARTS)[number];
/** The order errors are reported in: path, then query, then body. */
const REPORT_ORDER: readonly Part[] = ['params', 'querystring', 'body'];

type CompiledValidator = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null };

function partData(req: FastifyRequest, part: Part): unknown {
  return part === 'params' ? req.params : part === 'querystring' ? req.query : req.body;
}

/**
 * Every bad field of the request (docs/api/errors.md#error-body): the errors Fastify reported for the first part
 * that failed (`failedPart`, its `validationContext`), plus those of the parts it did not get to,
 * validated with the route's own compiled validators. The parts before the failed one passed.
 */
export function requestFieldErrors(req: FastifyRequest, failed: FastifySchemaValidationError[], failedPart: string | undefined): FieldError[] {
  const at = PARTS.indexOf(failedPart as Part);
  if (at < 0) return fieldErrorsFromValidation(failed, failedPart);
  const byPart = new Map<Part, FieldError[]>([[PARTS[at]!, fieldErrorsFromValidation(failed, failedPart)]]);
  for (const part of PARTS.slice(at + 1)) {
    // A body schema per content type is an object of validators, not one: leave it to Fastify.
    const validate = req.getValidationFunction(part) as unknown;
    if (typeof validate !== 'function') continue;
    const fn = validate as CompiledValidator;
    if (!fn(partData(req, part)) && fn.errors?.length) byPart.set(part, fieldErrorsFromValidation(fn.errors, part));
  }
  return REPORT_ORDER.flatMap((p) => byPart.get(p) ?? []);
}
