/**
 * Every environment variable the service reads is documented in README.md's "Configure" table, so
 * an operator never has to read the source to find a setting: every variable of the configuration
 * schema (src/config/variables.ts), and any other name the sources read.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables } from '../../src/config/variables.js';
import { ROOT, variablesRead } from '../helpers/env-reads.js';

/** Backticked names in the first column of the table under "## Configure". */
async function variablesDocumented(): Promise<Set<string>> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = readme.split(/^## Configure$/m)[1]?.split(/^## /m)[0] ?? '';
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const first = /^\|([^|]+)\|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(m[1]!);
  }
  return names;
}

describe('README configuration table', () => {
  it('documents every variable of the schema and every environment variable read in src/ and bin/', async () => {
    const read = new Set([...Object.keys(configVariables.properties), ...(await variablesRead()).keys()]);
    const documented = await variablesDocumented();
    expect(read.size).toBeGreaterThan(10);
    const missing = [...read].filter((n) => !documented.has(n)).sort();
    expect(missing, `add these to README.md's "Configure" table`).toEqual([]);
  });

  it('documents nothing the service does not read', async () => {
    const known = new Set(Object.keys(configVariables.properties));
    const stale = [...(await variablesDocumented())].filter((n) => !known.has(n)).sort();
    expect(stale, 'README.md\'s "Configure" table lists variables the schema does not have').toEqual([]);
  });
});
