/**
 * bench/results.md as sections: `npm run bench` (bench/run.ts) writes one section per engine and
 * keeps the rest, i.e. the other engine's section and the sections benchmarks run on their own wrote
 * (their first line names the script: "_Written by `node --import tsx bench/…`" or the like).
 */
export type EngineName = 'pglite' | 'postgres';

const HEADINGS: Record<EngineName, string> = {
  pglite: '## Service benchmarks: embedded PGlite',
  postgres: '## Service benchmarks: PostgreSQL',
};

const INTRO = [
  '# Benchmark results',
  '',
  '`npm run bench` writes one section per engine (embedded PGlite, then PostgreSQL); the sections after them come from benchmarks run on their own and name their script. Every row runs autocannon in a worker thread of the process that serves the API; the baselines (`bare`: a Fastify handler returning a constant; `select`: one SELECT by primary key of a 100,000-row table; `insert`: one transactional INSERT) run in the same process on the same database, at each connection count of the run; on PostgreSQL the service and the baselines share one pool of the size `carebook serve` keeps (`DATABASE_POOL_SIZE`, default 10).',
  '',
  'Ratios are to the baseline measured at the same number of connections at the start of the engine\'s run, except for rows with a ratio target: those are to the mean of their baseline measured right before and right after them (shown in the row), since the machine\'s speed drifts over a run. The host\'s CPU is unsteady (docs/investigations.md): compare ratios measured side by side, not absolute numbers across runs.',
].join('\n');

/** Splits a Markdown file into its `## ` sections (the text before the first one is dropped). */
function sections(text: string): string[] {
  return text.split(/^(?=## )/m).filter((s) => s.startsWith('## '));
}

/** Whether a section was written by a benchmark run on its own (its first lines name the script). */
export function isStandalone(section: string): boolean {
  return /^## [^\n]*\n+[^\n]*`node --import tsx bench\//.test(section);
}

/**
 * The new content of bench/results.md: `old` with the section of `engine` replaced by `body` (under
 * the engine's heading), the other engine's section and every standalone section kept, anything
 * else (an older layout's tables) dropped.
 */
export function mergeResults(old: string, engine: EngineName, body: string): string {
  const parts = sections(old);
  const engineSection = (e: EngineName) =>
    e === engine ? `${HEADINGS[e]}\n\n${body.trim()}\n` : parts.find((s) => s.startsWith(`${HEADINGS[e]}\n`));
  const engines = (['pglite', 'postgres'] as const).map(engineSection).filter((s): s is string => Boolean(s));
  const kept = parts.filter(isStandalone);
  return `${[INTRO, ...engines.map((s) => s.trimEnd()), ...kept.map((s) => s.trimEnd())].join('\n\n')}\n`;
}
