/**
 * No import cycles in src, type-only imports included: every module can be read (and moved) after
 * the modules it imports. Reads the static `import … from` / `export … from` statements and dynamic
 * `import('…')` calls of src/**\/*.ts, resolves the relative ones to files, and looks for a cycle
 * (a strongly connected component of more than one module, or a module importing itself).
 */
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
const SRC = join(ROOT, 'src');

async function tsFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await tsFiles(path)));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The relative module specifiers a source text imports or re-exports (comments removed first). */
export function importedSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const out: string[] = [];
  const patterns = [/\b(?:import|export)\s[^;'"]*?\sfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const re of patterns) for (const m of code.matchAll(re)) if (m[1]!.startsWith('.')) out.push(m[1]!);
  return out;
}

/** Module graph of src: file → files it imports. */
async function graph(): Promise<Map<string, string[]>> {
  const files = await tsFiles(SRC);
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets = importedSpecifiers(await readFile(file, 'utf8'))
      .map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')))
      .filter((t) => known.has(t));
    edges.set(file, [...new Set(targets)]);
  }
  return edges;
}

/** Strongly connected components with a cycle (Tarjan), each as sorted paths relative to the repository. */
export function cycles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(component.map((f) => relative(ROOT, f)).sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import cycles', () => {
  it('reads static, type-only, re-export, side-effect and dynamic imports, not comments', () => {
    const text = [
      "import { a } from './a.js';",
      "import type {\n  B,\n} from '../b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "import { g } from 'kysely';",
      "// import { h } from './h.js';",
      "/* import { i } from './i.js'; */",
    ].join('\n');
    expect(importedSpecifiers(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('finds a cycle, and a module importing itself', () => {
    const g = new Map([
      [join(ROOT, 'a'), [join(ROOT, 'b')]],
      [join(ROOT, 'b'), [join(ROOT, 'c')]],
      [join(ROOT, 'c'), [join(ROOT, 'a')]],
      [join(ROOT, 'd'), [join(ROOT, 'd'), join(ROOT, 'a')]],
      [join(ROOT, 'e'), [join(ROOT, 'a')]],
    ]);
    expect(cycles(g)).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('src has none, type-only imports included', async () => {
    const g = await graph();
    expect(g.size).toBeGreaterThan(100);
    expect(cycles(g)).toEqual([]);
  });
});
