#!/usr/bin/env node
/**
 * Rewrites citations of the internal working notes (interface.md and contracts.md, which are not
 * part of the repository) into references to the public API reference in docs/api/.
 *
 *   node scripts/rewrite-citations.mjs           rewrite in place; exit 1 (writing nothing) on any unmapped citation
 *   node scripts/rewrite-citations.mjs --check   write nothing; exit 1 if anything would change or is unmapped
 *   node scripts/rewrite-citations.mjs --list    print every citation key found, with its count and target
 *
 * What a citation becomes depends on where it stands (scripts/citations-map.json holds the mapping):
 * - in a code comment, or anywhere in a test: `docs/api/<page>.md#<anchor>`;
 * - in a string of shipped code (OpenAPI descriptions, error messages): a short plain wording,
 *   with no file reference;
 * - in Markdown: a relative link to the page and anchor.
 * A citation is the note's name followed by its sections (`§4.1, §2.1`, `§4.1–4.6`, continued over
 * comment lines) and, where the map knows one, a qualifier (`step 5`, `"Scale-out"`, `` `webhook set` ``).
 * Idempotent: rewritten text names neither note, so a second run changes nothing.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAP_PATH = join(ROOT, 'scripts', 'citations-map.json');
const SELF = ['scripts/rewrite-citations.mjs', 'scripts/citations-map.json'];
const WALK = ['src', 'test', 'docs', 'scripts', 'bench', 'clients/typescript/src', 'README.md'];
const SKIP_DIRS = new Set(['node_modules', '.git', 'generated', 'dist', 'coverage', 'data', 'test-results']);
const TEXT_EXT = /\.(ts|tsx|mts|cts|js|mjs|cjs|md|json|ya?ml|txt|html|css|sql|sh)$/;
const CODE_EXT = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const NOTE = /(?:(?:\/work\/shared\/spec\/|\.\.\/shared\/spec\/))?\b(interface|contracts)\.md\b/g;
const REF = /^§(\d+(?:\.\d+)?)(?:[–-]§?(\d+(?:\.\d+)?))?/;
/** Spaces, or a line break followed by a comment continuation (` * ` or `// `). */
const GAP = /^(?:[ \t]+|\r?\n[ \t]*(?:\*(?!\/)|\/\/)?[ \t]*)+/;
const SEPARATOR = /^(?:[ \t]*(?:,|\band\b)(?:[ \t]+|\r?\n[ \t]*(?:\*(?!\/)|\/\/)?[ \t]*)*)(?=§)/;

const mode = process.argv.includes('--check') ? 'check' : process.argv.includes('--list') ? 'list' : 'write';

/** @returns {Promise<string[]>} repository-relative paths of the files to look at */
async function walk(rel) {
  const abs = join(ROOT, rel);
  let entries;
  try {
    entries = await readdir(abs, { withFileTypes: true });
  } catch (e) {
    if (e.code === 'ENOTDIR') return [rel];
    if (e.code === 'ENOENT') return [];
    throw e;
  }
  const out = [];
  for (const entry of entries) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...(await walk(child)));
    } else if (TEXT_EXT.test(entry.name)) out.push(child);
  }
  return out;
}

/**
 * Marks each character of a code file as code (0), comment (1) or string (2). Template literal
 * substitutions (`${…}`) are code again. Good enough for this repository's sources, which is all
 * it needs to be: a citation that lands in the wrong class is still rewritten, only differently worded.
 */
function classify(text) {
  const kind = new Uint8Array(text.length);
  const braces = []; // for each open template substitution, the brace depth at which it closes
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    const d = text[i + 1];
    if (c === '/' && d === '/') {
      while (i < n && text[i] !== '\n') kind[i++] = 1;
    } else if (c === '/' && d === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? n : end + 2;
      while (i < stop) kind[i++] = 1;
    } else if (c === "'" || c === '"') {
      kind[i++] = 2;
      while (i < n && text[i] !== c && text[i] !== '\n') {
        if (text[i] === '\\') kind[i++] = 2;
        kind[i++] = 2;
      }
      kind[i++] = 2;
    } else if (c === '`' || (c === '}' && braces.length && braces[braces.length - 1] === depth)) {
      if (c === '}') braces.pop();
      kind[i++] = 2;
      while (i < n && text[i] !== '`') {
        if (text[i] === '\\') kind[i++] = 2;
        else if (text[i] === '$' && text[i + 1] === '{') {
          kind[i++] = 2;
          kind[i++] = 2;
          braces.push(depth);
          break;
        }
        kind[i++] = 2;
      }
      if (text[i] === '`') kind[i++] = 2;
    } else {
      if (c === '{') depth++;
      else if (c === '}') depth--;
      i++;
    }
  }
  return kind;
}

function loadMap(raw) {
  const map = JSON.parse(raw);
  const qualified = new Map(); // "interface.md §5.2" → qualifiers known for it, longest first
  for (const key of Object.keys(map.targets)) {
    const m = /^((?:interface|contracts)\.md §[^ ]+) (.+)$/.exec(key);
    if (!m) continue;
    const list = qualified.get(m[1]) ?? [];
    list.push(m[2]);
    qualified.set(m[1], list.sort((a, b) => b.length - a.length));
  }
  return { ...map, qualified };
}

/** The target of one section reference, or undefined. */
function resolve(map, path, key) {
  for (const o of map.overrides) {
    if (o.key === key && (path === o.path || path.startsWith(`${o.path}/`))) return o.target;
  }
  return map.targets[key];
}

/**
 * Parses the citation whose note name matched at `m`. Returns its span, the keys of its references
 * and, for each, its target (undefined when unmapped).
 */
function parseCitation(text, m, map, path) {
  const doc = `${m[1]}.md`;
  let end = m.index + m[0].length;
  const keys = [];
  const keptText = [];
  let rest = text.slice(end);
  const gap = GAP.exec(rest)?.[0] ?? '';
  let ref = REF.exec(rest.slice(gap.length));
  if (ref) {
    end += gap.length;
    for (;;) {
      rest = text.slice(end);
      ref = REF.exec(rest);
      if (!ref) break;
      let key = `${doc} ${ref[0]}`;
      let kept = '';
      end += ref[0].length;
      const after = text.slice(end);
      for (const q of map.qualified.get(key) ?? []) {
        const g = GAP.exec(after)?.[0] ?? '';
        const next = after.slice(g.length + q.length, g.length + q.length + 1);
        if (g && after.slice(g.length).startsWith(q) && (next === '' || /\W/.test(next))) {
          key = `${key} ${q}`;
          end += g.length + q.length;
          // A code-quoted qualifier (a command or an operation) is worth keeping beside the link.
          if (q.startsWith('`')) kept = ` ${q}`;
          break;
        }
      }
      keys.push(key);
      keptText.push(kept);
      const sepMatch = SEPARATOR.exec(text.slice(end));
      if (!sepMatch) break;
      end += sepMatch[0].length;
    }
  } else {
    keys.push(doc);
    keptText.push('');
  }
  return { start: m.index, end, keys, kept: keptText, targets: keys.map((k) => resolve(map, path, k)) };
}

function lineOf(text, index) {
  return text.slice(0, index).split('\n').length;
}

/** Words of an anchor ("who-sees-which-appointments" → "who sees which appointments"). */
function anchorWords(target) {
  const [page, anchor] = target.split('#');
  return anchor ? anchor.replace(/-/g, ' ') : page.replace(/\.md$/, '') === 'README' ? 'API reference' : `${page.replace(/\.md$/, '')} reference`;
}

/** Splits "page.md#anchor `kept qualifier`" into the target and the kept text (with its space). */
function splitKept(item) {
  const at = item.indexOf(' ');
  return at < 0 ? [item, ''] : [item.slice(0, at), item.slice(at)];
}

/** The distinct items of a citation: each target, with its kept qualifier outside plain wording. */
function itemsOf(c, context) {
  return [...new Set(c.targets.flatMap((t, i) => (Array.isArray(t) ? t : [t]).map((one) => `${one}${context === 'plain' ? '' : c.kept[i]}`)))];
}

function render(unique, path, context, map) {
  if (context === 'markdown') {
    const fromDir = dirname(path);
    return unique
      .map((t) => {
        const [target, quoted] = splitKept(t);
        const [page, anchor] = target.split('#');
        let rel = relative(fromDir, join('docs/api', page)).split(sep).join('/');
        if (!rel.startsWith('.')) rel = rel || page;
        return `[${anchorWords(target)}](${rel}${anchor ? `#${anchor}` : ''})${quoted}`;
      })
      .join(', ');
  }
  if (context === 'plain') {
    return [...new Set(unique.map((t) => map.plain[t] ?? map.plain[t.split('#')[0]] ?? 'the API reference at /docs'))].join(', ');
  }
  return unique.map((t) => `docs/api/${t}`).join(', ');
}

function contextAt(path, kind, index) {
  if (path.endsWith('.md')) return 'markdown';
  if (!CODE_EXT.test(path)) return 'plain';
  if (kind && kind[index] === 2 && !path.startsWith('test/')) return 'plain';
  return 'reference';
}

/** Applies the phrase replacements, then rewrites every citation. */
function rewrite(text, path, map, unmapped, seen) {
  let out = text;
  for (const p of map.phrases) {
    if (p.files && !p.files.some((f) => path === f || path.startsWith(`${f}/`) || (f.startsWith('*') && path.endsWith(f.slice(1))))) continue;
    out = out.split(p.find).join(p.replace);
  }
  const kind = CODE_EXT.test(path) ? classify(out) : undefined;
  const pieces = [];
  let last = 0;
  let previous = { end: -1, items: new Set() };
  for (const m of out.matchAll(NOTE)) {
    if (m.index < last) continue;
    const c = parseCitation(out, m, map, path);
    for (let i = 0; i < c.keys.length; i++) {
      seen.set(c.keys[i], { count: (seen.get(c.keys[i])?.count ?? 0) + 1, target: c.targets[i] });
      if (!c.targets[i]) unmapped.push(`${path}:${lineOf(out, c.start)}: ${c.keys[i]}   (${JSON.stringify(out.slice(c.start, c.end + 30))})`);
    }
    if (c.targets.some((t) => !t)) continue;
    const context = contextAt(path, kind, c.start);
    let items = itemsOf(c, context);
    // "(interface.md §5.3, contracts.md §3)" may name one page twice: say it once.
    const adjacent = previous.end === last && /^[,;] $/.test(out.slice(last, c.start));
    if (adjacent) items = items.filter((i) => !previous.items.has(i));
    if (items.length === 0) {
      last = c.end;
      previous = { end: last, items: previous.items };
      continue;
    }
    pieces.push(out.slice(last, c.start), render(items, path, context, map));
    last = c.end;
    previous = { end: last, items: new Set(adjacent ? [...previous.items, ...items] : items) };
  }
  pieces.push(out.slice(last));
  return pieces.join('');
}

const out = (line) => process.stdout.write(`${line}\n`);
const err = (line) => process.stderr.write(`${line}\n`);

async function main() {
  const map = loadMap(await readFile(MAP_PATH, 'utf8'));
  const files = (await Promise.all(WALK.map(walk))).flat().filter((f) => !SELF.includes(f));
  const unmapped = [];
  const seen = new Map();
  const changes = [];
  for (const path of files) {
    const text = await readFile(join(ROOT, path), 'utf8');
    if (!/(interface|contracts)\.md|§/.test(text)) continue;
    const next = rewrite(text, path, map, unmapped, seen);
    if (next !== text) changes.push({ path, next });
  }
  if (mode === 'list') {
    for (const [key, v] of [...seen].sort()) out(`${String(v.count).padStart(4)}  ${key}  →  ${v.target ?? 'UNMAPPED'}`);
    return;
  }
  if (unmapped.length) {
    err(`${unmapped.length} unmapped citation(s); add them to scripts/citations-map.json:`);
    for (const u of unmapped) err(`  ${u}`);
    process.exitCode = 1;
    return;
  }
  if (mode === 'check') {
    for (const c of changes) err(`would rewrite ${c.path}`);
    if (changes.length) process.exitCode = 1;
    return;
  }
  for (const c of changes) await writeFile(join(ROOT, c.path), c.next);
  out(`rewrote citations in ${changes.length} file(s)`);
}

await main();
