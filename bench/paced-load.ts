/**
 * The open-loop load generator shared by `npm run soak` (bench/soak.ts) and `npm run steadiness`
 * (bench/host-steadiness.ts): requests at a constant rate over an `http.Agent`, latency measured
 * from each request's scheduled time.
 */
import http from 'node:http';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One HTTP request as {@link sendRequest} sends it. */
export interface PlainRequest {
  host: string;
  port: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** A response's status and body; status 0 when the request or the response failed. */
export interface PlainResponse {
  status: number;
  body: string;
}

/**
 * Sends one request over `agent` (which queues it when all its sockets are busy) and resolves
 * with the status and the whole body as text. Never rejects: a socket or protocol error resolves
 * with status 0 and an empty body. A body gets its `content-length`.
 */
export function sendRequest(agent: http.Agent, r: PlainRequest): Promise<PlainResponse> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: r.host, port: r.port, method: r.method, path: r.path, agent,
        headers: { ...r.headers, ...(r.body ? { 'content-length': String(Buffer.byteLength(r.body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '' }));
    if (r.body) req.write(r.body);
    req.end();
  });
}

/** What {@link pacedLoad} runs: a rate, a duration, where requests come from and where results go. */
export interface PacedLoadOptions<R> {
  /** Requests per second, uniformly spaced (one every 1000/rate ms). */
  rate: number;
  /** How long to issue requests for: floor(seconds × rate) requests in all. */
  seconds: number;
  /** The next request to send, drawn when its scheduled time comes. */
  next: () => R;
  /** Sends a request (e.g. {@link sendRequest} over a keep-alive agent); must not reject. */
  send: (r: R) => Promise<PlainResponse>;
  /**
   * Called per response with its latency from the request's scheduled time (ms), its status, the
   * request, the scheduled time in ms since the run's start, and the response's body.
   */
  onResponse: (ms: number, status: number, r: R, atMs: number, body: string) => void;
  /** Called per request with how late the generator handed it over (ms after its scheduled time). */
  onIssue?: (lagMs: number) => void;
}

/**
 * An open-loop generator at a constant rate: one request every 1/rate s, uniformly spaced, over
 * whatever `send` uses (for {@link sendRequest}, keep-alive connections, at most the agent's
 * maxSockets at once; more wait in the agent's queue). Latency is measured from each request's
 * scheduled time, so a stalled service is charged for the requests it delayed (no coordinated
 * omission, as wrk2 measures). autocannon's own rate limit is not used here: it lets each
 * connection send its whole per-second quota back to back at the start of every second and then
 * idle, so at "70 %" the service saw bursts at full concurrency and the latencies measured the
 * bursts.
 *
 * Between batches the loop sleeps until the next scheduled time, at most 5 ms. Resolves once the
 * last requests have been answered, with the responses per second over the whole run and the
 * run's start (`performance.now()` at its first scheduled request).
 */
export async function pacedLoad<R>(opts: PacedLoadOptions<R>): Promise<{ achievedRate: number; startedAt: number }> {
  const interval = 1000 / opts.rate;
  const total = Math.floor(opts.seconds * opts.rate);
  const t0 = performance.now();
  let issued = 0;
  let done = 0;
  const pending: Promise<void>[] = [];
  while (issued < total) {
    const now = performance.now();
    while (issued < total && t0 + issued * interval <= now) {
      const scheduled = t0 + issued * interval;
      const r = opts.next();
      issued++;
      // How late the generator itself hands the request over (its timer and event loop): part of every latency.
      opts.onIssue?.(performance.now() - scheduled);
      const p = opts.send(r).then(({ status, body }) => {
        done++;
        opts.onResponse(performance.now() - scheduled, status, r, scheduled - t0, body);
      });
      pending.push(p);
      if (pending.length > 10_000) pending.splice(0, pending.length - 1000);
    }
    await sleep(Math.max(0, Math.min(5, t0 + issued * interval - performance.now())));
  }
  await Promise.all(pending);
  return { achievedRate: done / ((performance.now() - t0) / 1000), startedAt: t0 };
}
