/**
 * The documentation stands on its own: nothing in the repository, nor the served OpenAPI document,
 * points to the internal working notes that were never part of it (scripts/rewrite-citations.mjs
 * rewrites such citations, and only it and its map may name the notes); every `docs/….md#anchor`
 * cited in src, test and docs names a heading that exists; every relative link in docs/ and
 * README.md resolves, anchor included.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);
/** The notes' names, spelled so that this file does not contain them. */
const NOTES = new RegExp(`\\b(?:${['interface', 'contracts'].join('|')})\\.md\\b`);
const ALLOWED = ['scripts/rewrite-citations.mjs', 'scripts/citations-map.json'];
const SKIP_DIRS = new Set(['node_modules', '.git', 'data', 'dist', 'coverage', 'test-results', 'playwright-report']);

async function files(dir: string, keep: (name: string) => boolean): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...(await files(path, keep)));
    } else if (entry.isFile() && keep(entry.name)) out.push(path);
  }
  return out;
}

const rel = (path: string): string => relative(ROOT, path).split('\\').join('/');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, …. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\- _]/gu, '').replace(/ /g, '-');
}

/** Markdown outside fenced code blocks. */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

const anchorCache = new Map<string, Set<string>>();
async function anchorsOf(path: string): Promise<Set<string>> {
  const cached = anchorCache.get(path);
  if (cached) return cached;
  const text = prose(await readFile(path, 'utf8'));
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1]!);
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  anchorCache.set(path, anchors);
  return anchors;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

describe('the documentation stands on its own', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => t?.close());

  it('no file outside node_modules names the internal notes, except the rewrite script and its map', async () => {
    const offenders: string[] = [];
    for (const path of await files(ROOT, () => true)) {
      const buf = await readFile(path);
      if (buf.includes(0)) continue; // binary
      const text = buf.toString('utf8');
      if (!NOTES.test(text)) continue;
      const name = rel(path);
      if (ALLOWED.includes(name)) continue;
      const line = text.split('\n').findIndex((l) => NOTES.test(l)) + 1;
      offenders.push(`${name}:${line}`);
    }
    expect(offenders).toEqual([]);
    for (const name of ALLOWED) expect(NOTES.test(await readFile(join(ROOT, name), 'utf8')), `${name} holds the mapping`).toBe(true);
  });

  it('/openapi.json (with the admin API) names neither note', async () => {
    const res = await t.app.inject({ url: '/openapi.json', headers: { authorization: 'Bearer test-admin-token-0123456789abcdefgh' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('/admin/v1/developers');
    expect(NOTES.test(res.body)).toBe(false);
  });

  it('every docs/….md#anchor cited in src, test and docs exists', async () => {
    const sources = [
      ...(await files(join(ROOT, 'src'), () => true)),
      ...(await files(join(ROOT, 'test'), () => true)),
      ...(await files(join(ROOT, 'docs'), () => true)),
    ];
    const broken: string[] = [];
    let checked = 0;
    for (const path of sources) {
      const text = await readFile(path, 'utf8');
      for (const m of text.matchAll(/(?<![\w/.-])(docs\/[\w./-]+\.md)#([\w-]+)/g)) {
        checked++;
        const target = join(ROOT, m[1]!);
        if (!(await exists(target))) broken.push(`${rel(path)}: ${m[0]} (no such file)`);
        else if (!(await anchorsOf(target)).has(m[2]!)) broken.push(`${rel(path)}: ${m[0]} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('every relative link in docs/ and README.md resolves, anchors included', async () => {
    const pages = [...(await files(join(ROOT, 'docs'), (n) => n.endsWith('.md'))), join(ROOT, 'README.md')];
    const broken: string[] = [];
    for (const page of pages) {
      const text = prose(await readFile(page, 'utf8')).replace(/`[^`\n]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const link = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // http:, https:, mailto:
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file ? resolve(dirname(page), decodeURIComponent(file)) : page;
        if (!target.startsWith(ROOT) || !(await exists(target))) {
          broken.push(`${rel(page)}: ${link} (no such file)`);
        } else if (anchor && target.endsWith('.md') && !(await anchorsOf(target)).has(anchor)) {
          broken.push(`${rel(page)}: ${link} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
