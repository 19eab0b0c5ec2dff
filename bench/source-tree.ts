/**
 * An older commit's `src`, for benchmarks that compare it with the current one in one run
 * (bench/evaluator.ts, bench/profile.ts, bench/summary-refresh-ab.ts, bench/availability-kept-ab.ts): `git archive` of `src`,
 * package.json and tsconfig.json into a temporary directory, with this checkout's node_modules linked.
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** `commit`'s tree in a temporary directory: its `src` path and a cleanup that removes it. */
export function sourceTreeOf(commit: string, prefix: string): { src: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  execSync(`git -C ${JSON.stringify(ROOT)} archive ${JSON.stringify(commit)} src package.json tsconfig.json | tar -x -C ${JSON.stringify(dir)}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return { src: join(dir, 'src'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
