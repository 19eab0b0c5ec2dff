/**
 * Retries with backoff. A 429 or 503 answer, or a network failure, is tried again after the time the
 * service names in `Retry-After` (seconds or an HTTP date), or else after an exponential backoff with
 * full jitter. Writes are safe to repeat because the client sends the same `Idempotency-Key` on every
 * attempt (docs/api/errors.md, "Statuses").
 */

export interface RetryOptions {
  /** Attempts after the first one (default 3). */
  retries?: number;
  /** First backoff step in milliseconds (default 250); doubles per attempt. */
  baseDelayMs?: number;
  /** Upper bound for one wait, including a `Retry-After` (default 30 000). */
  maxDelayMs?: number;
  /** Statuses that are retried (default 429 and 503). */
  retryOn?: number[];
  /**
   * Whether a network failure (no answer) is tried again (default true). The token requests of a
   * signed-in user set it to false: an authorization code or a refresh token is single-use, and a
   * request that reached the service before the connection broke may have spent it.
   */
  retryNetworkErrors?: boolean;
  /** Waits; replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Milliseconds a `Retry-After` header asks for (delta-seconds or HTTP date), or undefined when it is
 * absent or unreadable.
 */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full-jitter exponential backoff for the given attempt (0-based). */
export function backoffMs(attempt: number, baseDelayMs: number, maxDelayMs: number): number {
  return Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
}

/**
 * Wraps a fetch function with retries. Each attempt sends a clone of the request, so bodies can be
 * sent again.
 */
export function withRetries(fetchFn: (request: Request) => Promise<Response>, opts: RetryOptions = {}): (request: Request) => Promise<Response> {
  const retries = opts.retries ?? 3;
  const base = opts.baseDelayMs ?? 250;
  const max = opts.maxDelayMs ?? 30_000;
  const retryOn = new Set(opts.retryOn ?? [429, 503]);
  const sleep = opts.sleep ?? defaultSleep;
  return async (request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      let response: Response;
      try {
        response = await fetchFn(last ? request : request.clone());
      } catch (err) {
        if (last || request.signal?.aborted || opts.retryNetworkErrors === false) throw err;
        await sleep(backoffMs(attempt, base, max));
        continue;
      }
      if (last || !retryOn.has(response.status)) return response;
      const wait = retryAfterMs(response.headers.get('retry-after'));
      void response.body?.cancel().catch(() => undefined);
      await sleep(Math.min(max, wait ?? backoffMs(attempt, base, max)));
    }
  };
}
