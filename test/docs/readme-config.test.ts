/**
 * Every environment variable the service reads is documented in README.md's "Configure" table, so
 * an operator never has to read the source to find a setting.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (/\.(ts|mjs|js)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Names read as `vars.NAME`, `vars['NAME']`, `process.env.NAME` or `process.env['NAME']`. */
async function variablesRead(): Promise<Set<string>> {
  const names = new Set<string>();
  const pattern = /\b(?:vars|process\.env)(?:\.([A-Z][A-Z0-9_]+)|\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\])/g;
  for (const file of [...(await sourceFiles(join(ROOT, 'src'))), ...(await sourceFiles(join(ROOT, 'bin')))]) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(pattern)) names.add((m[1] ?? m[2])!);
  }
  return names;
}

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
  it('documents every environment variable read in src/ and bin/', async () => {
    const read = await variablesRead();
    const documented = await variablesDocumented();
    expect(read.size).toBeGreaterThan(10);
    const missing = [...read].filter((n) => !documented.has(n)).sort();
    expect(missing, `add these to README.md's "Configure" table`).toEqual([]);
  });
});
