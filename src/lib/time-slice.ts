/**
 * Cooperative time slicing for long computations on the event loop. A loop over many items calls
 * `slice.pause()` after each; it resolves at once until `budgetMs` of wall time has passed since the
 * slice began, then yields to the event loop (`setImmediate`, so pending I/O and timers run first)
 * and starts a new slice. Requests that arrive meanwhile wait at most about one budget instead of
 * the whole computation.
 */
export class TimeSlice {
  private started = performance.now();

  constructor(private readonly budgetMs = 4) {}

  /** Yields to the event loop when the current slice has used its budget; otherwise resolves at once. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < this.budgetMs) return;
    await yieldToEventLoop();
    this.started = performance.now();
  }
}

/** Resolves after the event loop has run its pending I/O callbacks (`setImmediate`). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
