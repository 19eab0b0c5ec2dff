/**
 * Where a V8 CPU profile's time goes, by category (docs/performance.md, "Per-request CPU breakdown
 * (issue #20 §1)"): a pure function over the `.cpuprofile` JSON that bench/profile.ts writes.
 *
 * Each sample's time is the gap to the next sample (`timeDeltas[i + 1]`, as Chrome's DevTools counts
 * it; the last sample gets the median gap). The sample's leaf frame and its callers are walked from
 * the innermost outwards, and the first frame a *named* rule matches decides (`RULES`, by the frame's
 * URL or the special function names V8 gives). Frames no named rule matches are looked through:
 * Node's own JavaScript (`node:` URLs) and V8 builtins (no URL: `JSON.stringify`, `Array.map`, …)
 * count for the library or module that called them, so a socket write the pg driver starts is
 * "pg driver" and a `JSON.parse` in our handler is "our code". A stack with no named frame is
 * "Fastify + Node HTTP" when it holds Node's own code (the HTTP server, sockets, streams, timers),
 * else "other".
 */

/** The parts of V8's `Profiler.Profile` the categoriser reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber?: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime?: number;
  endTime?: number;
}

export const CATEGORIES = [
  'logging',
  'pg driver',
  'PGlite engine',
  'Kysely',
  'Fastify + Node HTTP',
  'auth',
  'JSON/serialisation',
  'Luxon',
  'our code',
  'GC',
  'program',
  'other',
  'idle',
] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * Named rules, tried in order on one frame; the first match names its category. URLs are file
 * paths (`file:///…/node_modules/pino/…`) or, for PGlite's WebAssembly, `wasm://…`. Our sources are
 * recognised by `/src/<dir>/` outside node_modules, so a copy of an older tree in a temporary
 * directory (the "before" side) is recognised as well.
 */
const RULES: { category: Category; test: (url: string, fn: string) => boolean }[] = [
  { category: 'GC', test: (u, f) => u === '' && f === '(garbage collector)' },
  { category: 'idle', test: (u, f) => u === '' && f === '(idle)' },
  { category: 'program', test: (u, f) => u === '' && f === '(program)' },
  { category: 'logging', test: (u) => /\/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|@pinojs\/[^/]+)\//.test(u) },
  { category: 'logging', test: (u) => ours(u, /^http\/(logger|request-log)\.ts$/) },
  { category: 'pg driver', test: (u) => /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pg-connection-string|pgpass|postgres-array|postgres-bytea|postgres-date|postgres-interval|pg-int8)\//.test(u) },
  { category: 'PGlite engine', test: (u) => /\/node_modules\/@electric-sql\/pglite\//.test(u) || u.startsWith('wasm://') },
  { category: 'Kysely', test: (u) => /\/node_modules\/kysely\//.test(u) },
  { category: 'auth', test: (u) => /\/node_modules\/jose\//.test(u) },
  { category: 'auth', test: (u) => ours(u, /^(auth\/|http\/auth-guard\.ts$|domain\/credentials\/)/) },
  { category: 'JSON/serialisation', test: (u) => /\/node_modules\/(fast-json-stringify|json-schema-ref-resolver|secure-json-parse)\//.test(u) },
  {
    category: 'Fastify + Node HTTP',
    test: (u) => /\/node_modules\/(fastify|@fastify\/[^/]+|find-my-way|avvio|light-my-request|fast-querystring|fast-uri|ajv|ajv-formats|toad-cache|rfdc|process-warning|abstract-logging|fastify-plugin)\//.test(u),
  },
  { category: 'Luxon', test: (u) => /\/node_modules\/luxon\//.test(u) },
  { category: 'our code', test: (u) => ours(u, /^[a-z-]+(\/|\.ts$)/) },
  // Any other package: named "other" at once, so Node's code it calls is not counted as HTTP.
  { category: 'other', test: (u) => /\/node_modules\//.test(u) },
];

/** True for a file of our `src/` tree (not a dependency's) whose path under `src/` matches `rest`. */
function ours(url: string, rest: RegExp): boolean {
  if (url.includes('/node_modules/')) return false;
  const at = url.lastIndexOf('/src/');
  return at >= 0 && rest.test(url.slice(at + 5));
}

/** The category one frame names by itself, or undefined for a frame to look through. */
export function frameCategory(url: string, functionName: string): Category | undefined {
  return RULES.find((r) => r.test(url, functionName))?.category;
}

export interface Breakdown {
  /** Microseconds per category (idle included, under `idle`). */
  us: Record<Category, number>;
  /** Non-idle microseconds (everything but `idle`). */
  busyUs: number;
  samples: number;
  /**
   * Self time per function (`name url:line`, and `[category]` after a looked-through frame, e.g.
   * `writev [pg driver]`), non-idle, in µs.
   */
  selfByFunction: Map<string, number>;
}

/** Attributes every sample of `profile` to a category (see the module comment). */
export function categorise(profile: CpuProfile): Breakdown {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, Category>();
  const categoryOf = (leaf: number): Category => {
    const known = memo.get(leaf);
    if (known) return known;
    let sawNode = false;
    let found: Category | undefined;
    for (let id: number | undefined = leaf; id !== undefined && !found; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      found = frameCategory(frame.url, frame.functionName);
      if (frame.url.startsWith('node:')) sawNode = true;
    }
    const c = found ?? (sawNode ? 'Fastify + Node HTTP' : 'other');
    memo.set(leaf, c);
    return c;
  };

  const deltas = profile.timeDeltas;
  const gaps = deltas.slice(1).filter((d) => d > 0).sort((a, b) => a - b);
  const lastGap = gaps.length ? gaps[Math.floor(gaps.length / 2)]! : 0;
  const us = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  const selfByFunction = new Map<string, number>();
  profile.samples.forEach((leaf, i) => {
    const t = i + 1 < deltas.length ? Math.max(0, deltas[i + 1]!) : lastGap;
    const c = categoryOf(leaf);
    us[c] += t;
    if (c === 'idle') return;
    const f = byId.get(leaf)!.callFrame;
    // A looked-through frame (Node's code, a builtin such as `writev`) is named with the category it counted for.
    const key =
      `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}${f.url ? `:${(f.lineNumber ?? 0) + 1}` : ''}`.trim() +
      (frameCategory(f.url, f.functionName) === undefined ? ` [${c}]` : '');
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + t);
  });
  const busyUs = CATEGORIES.filter((c) => c !== 'idle').reduce((s, c) => s + us[c], 0);
  return { us, busyUs, samples: profile.samples.length, selfByFunction };
}

/** A frame's URL without the machine's directories: `pino/lib/proto.js`, `src/http/logger.ts`, `node:net`. */
export function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) return url.slice(nm + 14);
  const src = url.lastIndexOf('/src/');
  if (src >= 0 && url.startsWith('file:')) return url.slice(src + 1);
  return url.startsWith('wasm://') ? 'wasm' : url;
}
