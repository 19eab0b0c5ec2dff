/**
 * A/B of the per-request logging cost (issue #20 §2, docs/performance.md): the log lines one
 * request wrote before (two lines, through pino's wildcard redaction list of 50 paths) against now
 * (one line, top-level field check), both into a sink that drops the bytes, in one process.
 * `node --import tsx bench/logging-ab.ts [oldLoggerModule]`; the old options come from the module
 * given (a copy of the earlier src/http/logger.ts), else only the new side runs.
 */
import { Writable } from 'node:stream';
import { pino, type LoggerOptions } from 'pino';
import { loggerOptions } from '../src/http/logger.js';

const sink = () => new Writable({ write(_c, _e, cb) { cb(); } });
const req = { method: 'GET', url: '/v1/appointments/ap_0123456789?include=patient', ip: '127.0.0.1' };
const res = { statusCode: 200 };

function perRequestMicros(opts: LoggerOptions, lines: 1 | 2, n = 200_000): number {
  const log = pino(opts, sink()).child({ request_id: 'req_0123456789abcdef01234567' });
  const run = (k: number) => {
    for (let i = 0; i < k; i++) {
      if (lines === 2) log.info({ req }, 'incoming request');
      log.info({ req, res, responseTime: 1.25 }, 'request completed');
    }
  };
  run(20_000);
  const t0 = process.hrtime.bigint();
  run(n);
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

const oldModule = process.argv[2];
const rounds = 5;
const results: { old?: number; now: number }[] = [];
const oldOpts = oldModule ? ((await import(oldModule)) as { loggerOptions(l: string): LoggerOptions }).loggerOptions('info') : undefined;
for (let r = 0; r < rounds; r++) {
  results.push({ ...(oldOpts ? { old: perRequestMicros(oldOpts, 2) } : {}), now: perRequestMicros(loggerOptions('info'), 1) });
}
const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const now = median(results.map((r) => r.now));
console.log(`logging per request, median of ${rounds} rounds: now ${now.toFixed(2)} µs (1 line)`);
if (oldOpts) {
  const old = median(results.map((r) => r.old!));
  console.log(`before ${old.toFixed(2)} µs (2 lines, wildcard redaction): ${(old / now).toFixed(1)}× the cost now`);
}
