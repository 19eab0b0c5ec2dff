/**
 * `carebook config`: the effective configuration, every variable with its value and whether it came
 * from the environment or is the default, secrets masked. `carebook config --help` lists every
 * variable with its type, default and description. Both come from the schema of
 * src/config/variables.ts, so they cannot drift from what the service reads.
 */
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config.js';
import { parseVariables } from '../../config/parse-variables.js';
import { variableEntries, type VariableName, type VariableSchema } from '../../config/variables.js';

/** What stands in for a secret. */
export const MASK = '********';

/** How the help names a string format of the schema. */
const FORMAT_NAMES: Record<string, string> = {
  'absolute-url': 'absolute URL',
  'postgres-url': 'postgres:// URL',
  'trust-proxy': 'true | false | hop count | comma list of addresses/CIDRs',
  'key-32-bytes-base64': '32 bytes in base64',
};

/** A variable's type in words, from its schema. */
export function typeOf(schema: VariableSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.join(' | ');
  if (schema.type === 'integer') return `integer ${String(schema.minimum)}..${String(schema.maximum)}`;
  if (schema.type === 'boolean') return 'true | false';
  if (typeof schema.format === 'string') return FORMAT_NAMES[schema.format] ?? schema.format;
  return 'text';
}

/** A variable's default in words: a value, a rule, or "unset". */
export function defaultOf(schema: VariableSchema): string {
  if (schema.default !== undefined) return String(schema.default);
  return schema['x-default'] ?? 'unset';
}

function wrap(text: string, indent: string, width = 100): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => `${indent}${l}`).join('\n');
}

/** The help's list of every variable: name, type, default, secret or not, description. */
export function variablesHelp(): string {
  const entries = variableEntries().map(([name, schema]) => {
    const notes = [typeOf(schema), `default: ${defaultOf(schema)}`, ...(schema['x-secret'] ? ['secret'] : [])];
    return `  ${name}  (${notes.join('; ')})\n${wrap(schema.description, '      ')}`;
  });
  return [
    '',
    'Prints the effective configuration (secrets masked), or why it is not valid (exit status 1).',
    'Environment variables (an empty one counts as unset):',
    '',
    ...entries,
    '',
  ].join('\n');
}

/** A URL with its password masked (or all of it, when it does not parse). */
function maskPassword(raw: string): string {
  try {
    const url = new URL(raw);
    if (!url.password) return raw;
    url.password = MASK;
    return url.href.replace(/\/$/, raw.endsWith('/') ? '/' : '');
  } catch {
    return MASK;
  }
}

/** One variable's effective value (secrets masked) and where it came from. */
export interface EffectiveValue {
  value: string | number | boolean | null;
  source: 'environment' | 'default';
}

/**
 * Every variable's effective value: as parsed from the environment (masked when secret), its
 * default, or, for a default that depends on other variables, what the configuration made of it.
 * A key is never printed.
 */
export function effectiveConfiguration(env: Record<string, string | undefined>, config: Config): Record<VariableName, EffectiveValue> {
  const parsed: Partial<Record<VariableName, unknown>> = parseVariables(env);
  const out = {} as Record<VariableName, EffectiveValue>;
  for (const [name, schema] of variableEntries()) {
    const raw = env[name];
    const given = raw !== undefined && raw !== '';
    const secret = schema['x-secret'];
    let value: unknown = parsed[name] ?? (secret ? undefined : config[schema['x-field']]);
    if (value !== undefined && secret) value = secret === 'password' ? maskPassword(String(value)) : MASK;
    if (Buffer.isBuffer(value)) value = given ? MASK : undefined;
    if (Array.isArray(value)) value = value.join(',');
    out[name] = { value: value === undefined ? null : (value as string | number | boolean), source: given ? 'environment' : 'default' };
  }
  return out;
}

/** Registers `carebook config` on the program; `env` is the environment it reads. */
export function addConfigCommand(program: Command, env: Record<string, string | undefined>): void {
  program
    .command('config')
    .description('print the effective configuration, secrets masked (--help: every variable, its type, default and meaning)')
    .option('--json', 'print JSON: {NAME: {value, source}}')
    .addHelpText('after', variablesHelp())
    .action((opts: { json?: boolean }) => {
      const values = effectiveConfiguration(env, loadConfig(env));
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(values, null, 2)}\n`);
        return;
      }
      const width = Math.max(...Object.keys(values).map((n) => n.length)) + 2;
      const lines = Object.entries(values).map(([name, v]) => `${name.padEnd(width)}${v.value === null ? 'unset' : `${String(v.value)}${v.source === 'default' ? '  (default)' : ''}`}`);
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
