/**
 * The run's slowdown (start-up measured by test/helpers/global-setup.ts against an idle machine's) and
 * `scaled(ms)` for the waits and timeouts a test sets itself.
 */
import { inject } from 'vitest';

/** ≥ 1: how much slower than an idle machine this run started up. */
export const timeoutScale: number = inject('timeoutScale') ?? 1;

/** A wait or timeout chosen for an idle machine, stretched for this run's measured speed. */
export function scaled(ms: number): number {
  return Math.round(ms * timeoutScale);
}
