/**
 * Parses the environment with the schema of src/config/variables.ts: Ajv coerces text to integers
 * and booleans as `Number()` and `"true"`/`"false"` would, fills in defaults, and reports every bad
 * variable at once, each message naming its variable.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { isIP } from 'node:net';
import { configVariables, type ConfigVariables, type VariableName, type VariableSchema, variableEntries } from './variables.js';

/** A configuration error; its message names the variable(s) at fault. */
export class ConfigError extends Error {}

/** Whether `v` is an IP address or a CIDR range. */
export function isAddressOrCidr(v: string): boolean {
  const [addr, bits, ...rest] = v.split('/');
  if (rest.length || !addr) return false;
  const family = isIP(addr);
  if (!family) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/** `TRUST_PROXY`'s forms: `true`, `false`, a hop count up to 100, or a comma list of addresses/CIDRs. */
export function isTrustProxy(raw: string): boolean {
  const v = raw.trim();
  if (v === '' || v === 'true' || v === 'false') return true;
  if (/^\d+$/.test(v)) return Number(v) <= 100;
  const list = v.split(',').map((x) => x.trim()).filter(Boolean);
  return list.length > 0 && list.every(isAddressOrCidr);
}

/** Whether `raw` (trimmed) is 32 bytes in base64. */
export function isKey32Base64(raw: string): boolean {
  return Buffer.from(raw.trim(), 'base64').length === 32;
}

/**
 * The schema's validator. Compiling it takes ~60 ms, so it is compiled once, on first use, and kept:
 * a pure function of the schema, holding no state between calls.
 */
let compiled: ValidateFunction<ConfigVariables> | undefined;

function compile(): ValidateFunction<ConfigVariables> {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false });
  ajv.addFormat('absolute-url', (s: string) => URL.canParse(s.replace(/\/+$/, '')));
  ajv.addFormat('postgres-url', /^postgres(ql)?:\/\//);
  ajv.addFormat('trust-proxy', isTrustProxy);
  ajv.addFormat('key-32-bytes-base64', isKey32Base64);
  return ajv.compile<ConfigVariables>(configVariables);
}

/** What a bad value must be, in words, from the variable's schema. */
function requirement(schema: Partial<VariableSchema>): string {
  if (typeof schema['x-error-message'] === 'string') return schema['x-error-message'];
  if (schema.type === 'integer') return `must be an integer from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  if (schema.type === 'boolean') return 'must be true or false';
  if (Array.isArray(schema.enum)) return `must be ${schema.enum.map((x) => JSON.stringify(x)).join(' or ')}`;
  return 'is not valid';
}

/** The message for a bad value: the variable, what it must be and (unless secret) what it was. */
export function badValue(name: string, raw: string): string {
  const schema: Partial<VariableSchema> = variableEntries().find(([n]) => n === name)?.[1] ?? {};
  return `${name} ${requirement(schema)}${schema['x-secret'] ? '' : `, got ${JSON.stringify(raw)}`}`;
}

/**
 * The schema's variables from `env` (others are ignored; an empty one counts as unset), coerced and
 * with their defaults. Throws `ConfigError` naming every variable with a bad value.
 */
export function parseVariables(env: Record<string, string | undefined>): ConfigVariables {
  const given: Record<string, string> = {};
  for (const [name] of variableEntries()) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') given[name] = raw;
  }
  const value: Record<string, unknown> = { ...given };
  const validate = (compiled ??= compile());
  if (validate(value)) return value as ConfigVariables;
  const bad = new Set<VariableName>();
  for (const e of validate.errors ?? []) {
    const name = e.instancePath.split('/')[1] as VariableName | undefined;
    if (name) bad.add(name);
  }
  throw new ConfigError([...bad].map((name) => badValue(name, given[name] ?? '')).join('; '));
}
