/**
 * The environment variables the sources read by name: `process.env.NAME`, `env.NAME`, `vars.NAME`
 * (or with `['NAME']`), in src/ and bin/. Used to check that the configuration schema and README.md
 * know every one.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname;

async function sourceFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await sourceFiles(path)));
    else if (/\.(ts|mjs|js)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Each name read, with the files that read it. */
export async function variablesRead(): Promise<Map<string, string[]>> {
  const names = new Map<string, string[]>();
  const pattern = /\b(?:vars|env|process\.env)(?:\.([A-Z][A-Z0-9_]+)\b|\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\])/g;
  for (const file of [...(await sourceFiles(join(ROOT, 'src'))), ...(await sourceFiles(join(ROOT, 'bin')))]) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(pattern)) {
      const name = (m[1] ?? m[2])!;
      names.set(name, [...(names.get(name) ?? []), file.slice(ROOT.length)]);
    }
  }
  return names;
}
