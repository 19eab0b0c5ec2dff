/**
 * Reads a directory file (docs/directory-format.md) in either form, keeping the line of every record
 * so that errors can name it (issue #4: "every bad row reported with its line and reason"):
 * - JSON: one object whose members are the record sections (`providers: [...]`, ...);
 * - NDJSON: one record per line, `{"type": "provider", ...}`; blank lines are skipped.
 */
import { SECTIONS, SECTION_NAMES, type Section } from '../document-schema.js';

export interface ImportError {
  /** 1-based line of the record (0 when the error concerns the whole file). */
  line: number;
  /** Where in the document, e.g. `providers[3].npi`. */
  field?: string;
  message: string;
}

export interface ParsedDocument {
  /** Records by section, as read (not yet validated). */
  records: Record<Section, unknown[]>;
  /** Line of each record, parallel to `records`. */
  lines: Record<Section, number[]>;
}

export type ImportFormat = 'json' | 'ndjson';

const TYPE_TO_SECTION = new Map<string, Section>(SECTION_NAMES.map((s) => [SECTIONS[s].type, s]));

function empty<T>(): Record<Section, T[]> {
  return Object.fromEntries(SECTION_NAMES.map((s) => [s, []])) as unknown as Record<Section, T[]>;
}

/** `json` when the first non-blank character opens an object that spans lines or holds sections; else `ndjson`. */
export function detectFormat(text: string): ImportFormat {
  const firstLine = text.replace(/^\uFEFF/, '').split('\n', 1)[0]!.trim();
  if (!firstLine.startsWith('{')) return 'json';
  try {
    const o = JSON.parse(firstLine) as unknown;
    return o && typeof o === 'object' && !Array.isArray(o) && typeof (o as { type?: unknown }).type === 'string' ? 'ndjson' : 'json';
  } catch {
    return 'json';
  }
}

/** What parsing read, and what it could not: the readable records are kept so that they can be validated too. */
export interface PartialParse extends ParsedDocument {
  /** Lines that could not be read, sections that do not exist, … (sorted by line). */
  errors: ImportError[];
  /** True when nothing could be read (the JSON form is not valid JSON): `records` is empty. */
  fatal: boolean;
}

/** Parses `text`; returns the records with their lines, or every error found while parsing. */
export function parseDirectoryText(text: string, format?: ImportFormat): ParsedDocument | { errors: ImportError[] } {
  const p = parseDirectoryTextPartially(text, format);
  return p.errors.length ? { errors: p.errors } : { records: p.records, lines: p.lines };
}

/**
 * Parses `text` as far as it can: a bad NDJSON line or an unknown JSON section is reported and the
 * rest is still read, so that an import can report every bad row at once (issue #4).
 */
export function parseDirectoryTextPartially(text: string, format: ImportFormat = detectFormat(text)): PartialParse {
  const body = text.replace(/^\uFEFF/, '');
  return format === 'ndjson' ? parseNdjson(body) : parseJson(body);
}

function parseNdjson(text: string): PartialParse {
  const records = empty<unknown>();
  const lines = empty<number>();
  const errors: ImportError[] = [];
  const all = text.split('\n');
  for (let i = 0; i < all.length; i++) {
    const raw = all[i]!.trim();
    if (!raw) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      errors.push({ line: i + 1, message: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ line: i + 1, message: 'each line must be a JSON object' });
      continue;
    }
    const { type, ...rest } = value as Record<string, unknown>;
    const section = typeof type === 'string' ? TYPE_TO_SECTION.get(type) : undefined;
    if (!section) {
      errors.push({ line: i + 1, field: 'type', message: `must be one of: ${[...TYPE_TO_SECTION.keys()].join(', ')}` });
      continue;
    }
    records[section].push(rest);
    lines[section].push(i + 1);
  }
  return { records, lines, errors, fatal: false };
}

function lineAt(text: string, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function parseJson(text: string): PartialParse {
  const fatal = (errors: ImportError[]): PartialParse => ({ records: empty<unknown>(), lines: empty<number>(), errors, fatal: true });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const m = /line (\d+)/.exec(msg) ?? null;
    const p = /position (\d+)/.exec(msg);
    const line = m ? Number(m[1]) : p ? lineAt(text, Number(p[1])) : lineAt(text, syntaxErrorOffset(text));
    return fatal([{ line, message: `not valid JSON: ${msg}` }]);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    return fatal([{ line: 1, message: 'the document must be a JSON object with record sections (see docs/directory-format.md)' }]);
  }
  const errors: ImportError[] = [];
  const records = empty<unknown>();
  const found = elementLines(text);
  for (const [key, value] of Object.entries(doc as Record<string, unknown>)) {
    const line = found.keys.get(key) ?? 1;
    if (!(key in SECTIONS)) {
      errors.push({ line, field: key, message: `unknown section; sections are ${SECTION_NAMES.join(', ')}` });
      continue;
    }
    if (!Array.isArray(value)) {
      errors.push({ line, field: key, message: 'must be an array' });
      continue;
    }
    records[key as Section] = value;
  }
  const lines = empty<number>();
  for (const s of SECTION_NAMES) lines[s] = records[s].map((_, i) => found.elements.get(s)?.[i] ?? 0);
  return { records, lines, errors, fatal: false };
}

/**
 * The line of each top-level key, and the line where each element of each top-level array member
 * starts: a single pass over the text that follows strings and nesting only (the text is already
 * known to be valid JSON).
 */
function elementLines(text: string): { keys: Map<string, number>; elements: Map<string, number[]> } {
  const out = new Map<string, number[]>();
  const keys = new Map<string, number>();
  const stack: number[] = []; // char codes of open containers
  let line = 1;
  let lastKey: string | undefined;
  let section: number[] | undefined;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) continue;
    const inSection = stack.length === 2 && stack[0] === 123 && stack[1] === 91;
    if (inSection && c !== 44 && c !== 93) section?.push(line);
    if (c === 34) {
      // A string: skip to its closing quote.
      let j = i + 1;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 92) j += 2;
        else if (d === 34) break;
        else j++;
      }
      if (stack.length === 1) {
        lastKey = JSON.parse(text.slice(i, j + 1)) as string;
        if (!keys.has(lastKey)) keys.set(lastKey, line);
      }
      i = j;
      continue;
    }
    if (c === 123 || c === 91) {
      stack.push(c);
      if (stack.length === 2 && c === 91 && stack[0] === 123 && lastKey !== undefined) {
        section = [];
        out.set(lastKey, section);
      }
      if (inSection) {
        // Skip the whole element quickly, counting lines.
        const end = skipContainer(text, i);
        for (let k = i; k < end; k++) if (text.charCodeAt(k) === 10) line++;
        stack.pop();
        i = end - 1;
      }
      continue;
    }
    if (c === 125 || c === 93) {
      stack.pop();
      if (stack.length === 1) section = undefined;
      continue;
    }
    if (inSection) {
      // A scalar element (a number, true, false, null): skip to its end.
      while (i + 1 < n && !/[\s,\]]/.test(text[i + 1]!)) i++;
    }
  }
  return { keys, elements: out };
}

/** Index just past the container that opens at `start`. */
function skipContainer(text: string, start: number): number {
  let depth = 0;
  const n = text.length;
  for (let i = start; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92) i += 2;
        else if (d === 34) break;
        else i++;
      }
    } else if (c === 123 || c === 91) depth++;
    else if (c === 125 || c === 93) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return n;
}

/**
 * Offset of the first JSON syntax error in `text` (Node 20's JSON.parse does not say where): a
 * minimal recursive-descent recogniser, used only after JSON.parse has failed.
 */
export function syntaxErrorOffset(text: string): number {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && /\s/.test(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const lit = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail();
  };
  const str = () => {
    if (text[i] !== '"') fail();
    i++;
    while (i < n && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 32) fail();
      i++;
    }
    if (i >= n) fail();
    i++;
  };
  const num = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 64));
    if (!m || !m[0]) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        str();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return;
        } else fail();
      }
    } else if (c === '"') str();
    else if (c === 't') lit('true');
    else if (c === 'f') lit('false');
    else if (c === 'n') lit('null');
    else num();
  };
  try {
    value();
    ws();
    return i < n ? i : n;
  } catch (at) {
    return typeof at === 'number' ? at : 0;
  }
}
