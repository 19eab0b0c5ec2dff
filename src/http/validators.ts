/**
 * Request validation compilers. Bodies are validated strictly (a number is not a string: a known
 * field with a wrong type is a 400, docs/api/conventions.md#unknown-fields-and-parameters); query strings, path and headers are text by
 * nature, so they are coerced (`page=2` → 2, `a,b` stays a comma-delimited string). Both run with
 * `allErrors` so that every bad field is named.
 */
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(opts: Options): Ajv {
  // verbose: an error carries its schema, so a schema's own message (`x-error-message`) can be reported.
  const ajv = new Ajv({ allErrors: true, useDefaults: true, removeAdditional: false, strict: false, verbose: true, ...opts });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const strict = makeAjv({ coerceTypes: false });
  const coercing = makeAjv({ coerceTypes: 'array' });
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
