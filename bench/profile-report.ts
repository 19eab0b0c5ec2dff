/**
 * bench/profile.ts's tables: per path and side, CPU per request and the share of each category
 * (bench/cpu-profile-categories.ts), and the top self-time functions; written as the engine's own
 * section of bench/results.md (kept by `npm run bench`, whose bench/run.ts keeps the sections whose
 * first line is "_Written by `node --import tsx bench/…`").
 */
import { execSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { CATEGORIES, type Breakdown, type Category } from './cpu-profile-categories.js';

export interface PathRun {
  side: string;
  path: string;
  requests: number;
  non2xx: number;
  rps: number;
  p50: number;
  p99: number;
  /** One-minute load average when the measured load started. */
  load1: number;
  breakdown: Breakdown;
  /** The server process's main thread's CPU time over the profiled window, µs. */
  processCpuUs: number;
  settleMs: number;
  /** Appointments the evaluator had not yet evaluated when the profile stopped. */
  dueLeft: number;
  logLines: number;
  /** PostgreSQL: CPU time of the backends serving the server's connections, µs. */
  serverUs?: number;
}

const BUSY: Category[] = CATEGORIES.filter((c) => c !== 'idle');
const pct = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}` : '-');

/** The CPU table: one row per run, µs per request and each category's share of the non-idle profile time. */
export function cpuTable(runs: PathRun[]): string {
  const cats = BUSY.filter((c) => runs.some((r) => r.breakdown.us[c] > 0));
  const hasServer = runs.some((r) => r.serverUs !== undefined);
  const head = ['path', 'side', 'req', 'req/s', 'log lines/req', 'left due', 'load', 'CPU µs/req (main thread)', 'sampled µs/req', ...(hasServer ? ['PostgreSQL µs/req'] : []), ...cats.map((c) => `${c} %`)];
  const rows = runs.map((r) => {
    const b = r.breakdown;
    return [
      r.path, r.side, `${r.requests}${r.non2xx ? ` (${r.non2xx} non-2xx)` : ''}`, String(r.rps), (r.logLines / r.requests).toFixed(2), String(r.dueLeft), r.load1.toFixed(2),
      (r.processCpuUs / r.requests).toFixed(0), (b.busyUs / r.requests).toFixed(0),
      ...(hasServer ? [r.serverUs !== undefined ? (r.serverUs / r.requests).toFixed(0) : '-'] : []),
      ...cats.map((c) => pct(b.us[c], b.busyUs)),
    ];
  });
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The `n` functions with the most self time in a run, with their share of its non-idle time. */
export function topFunctions(run: PathRun, n: number): string[] {
  return [...run.breakdown.selfByFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([fn, us]) => `${pct(us, run.breakdown.busyUs)} % \`${fn}\``);
}

/** Replaces (or appends) this engine's section of `file`; returns the section. */
export async function writeProfileSection(
  file: string,
  input: { engine: string; before: string[]; started: Date; runs: PathRun[]; load: number[] },
): Promise<string> {
  const kind = input.engine.startsWith('PostgreSQL') ? 'PostgreSQL' : 'PGlite';
  const head = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
  const heading = `## Per-request CPU profile on ${kind}`;
  const section = [
    heading,
    '',
    `_Written by \`node --import tsx bench/profile.ts\`${kind === 'PostgreSQL' ? ' with `BENCH_DATABASE_URL`' : ''} (method and category rules: docs/performance.md, "Per-request CPU breakdown (issue #20 §1)"). ` +
      `${input.started.toISOString()} · ${input.engine} · Node ${process.version} · before: ${input.before.join(', ')}; after: ${head} · load average at the end ${input.load.map((l) => l.toFixed(2)).join(' ')} (2 cores, shared)._`,
    '',
    'Each row is one child process serving one path under V8\'s sampling profiler, from the start of the measured requests until the process has settled after them. `CPU µs/req` is the user + system time of the server\'s main thread meanwhile (from /proc, ÷ requests); `sampled µs/req` the profile\'s non-idle sample time ÷ requests, which counts wall time (it exceeds the CPU time when the host makes the thread wait); the category shares are of the sampled time. `left due`: bookings the evaluator had not evaluated when the profile stopped (its work on the others is in the row).',
    '',
    cpuTable(input.runs),
    '',
    'Top self-time functions (share of the run\'s non-idle profile time):',
    '',
    ...input.runs.map((r) => `- ${r.path}, ${r.side}: ${topFunctions(r, 10).join('; ')}`),
    '',
  ].join('\n');
  const old = await readFile(file, 'utf8').catch(() => '');
  const parts = old.split(/^(?=## )/m);
  const at = parts.findIndex((p) => p.startsWith(`${heading}\n`));
  if (at >= 0) parts[at] = `${section}\n`;
  else parts.push(`${parts.length && !old.endsWith('\n\n') ? '\n' : ''}${section}\n`);
  await writeFile(file, parts.join('').replace(/\n{3,}$/, '\n'));
  return section;
}
