import { describe, expect, it } from 'vitest';
import { isStandalone, mergeResults } from '../../bench/results-file.js';

const standalone = '## The evaluator (issue #20 §3)\n\n_Written by `node --import tsx bench/evaluator.ts`, not by `npm run bench`._\n\n| a |\n';

describe('bench/results.md sections', () => {
  it('replaces the engine run now, keeps the other engine and the standalone sections, drops an older layout', () => {
    const old = [
      '# Benchmark results',
      '',
      'old intro',
      '',
      '| old main table |',
      '',
      '## Targets',
      '',
      '- PASS old',
      '',
      '## Service benchmarks: PostgreSQL',
      '',
      'postgres body',
      '',
      standalone,
    ].join('\n');
    const merged = mergeResults(old, 'pglite', 'pglite body');
    expect(merged).toContain('## Service benchmarks: embedded PGlite\n\npglite body');
    expect(merged).toContain('## Service benchmarks: PostgreSQL\n\npostgres body');
    expect(merged).toContain('_Written by `node --import tsx bench/evaluator.ts`');
    expect(merged).not.toContain('old main table');
    expect(merged).not.toContain('## Targets');
    // Engines first (embedded, then PostgreSQL), standalone sections after them.
    expect(merged.indexOf('embedded PGlite')).toBeLessThan(merged.indexOf('Service benchmarks: PostgreSQL'));
    expect(merged.indexOf('Service benchmarks: PostgreSQL')).toBeLessThan(merged.indexOf('The evaluator'));

    const again = mergeResults(merged, 'postgres', 'new postgres body');
    expect(again).toContain('pglite body');
    expect(again).toContain('new postgres body');
    expect(again).not.toContain('\npostgres body');
    expect(again.match(/## Service benchmarks: PostgreSQL/g)).toHaveLength(1);
  });

  it('knows a standalone section by the script its first lines name', () => {
    expect(isStandalone(standalone)).toBe(true);
    expect(isStandalone('## directory reads (issue #20 §7)\n\n2026-11-27 · `node --import tsx bench/directory-reads.ts` (not part of `npm run bench`)\n')).toBe(true);
    expect(isStandalone('## Targets\n\n- PASS x\n')).toBe(false);
  });
});
