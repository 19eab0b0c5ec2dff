// A worker thread that polls GET /healthz for bench/attachment-stall.ts, so that the latencies are
// those a separate health checker would see: the uploading client's own work (encoding and sending
// 10 MB, reading it back) runs on the main thread's event loop and does not delay these answers.
// Messages: {start: url, everyMs} begins polling (one request every everyMs, never waiting for the
// previous answer); {stop: true} stops and answers {latencies} (ms) of every poll sent meanwhile.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { parentPort } from 'node:worker_threads';

const agent = new http.Agent({ keepAlive: true, maxSockets: 2000 });
let timer;
let pending = [];

function poll(url) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('error', reject);
  });
}

parentPort.on('message', async (m) => {
  if (m.start) {
    pending = [poll(m.start)];
    timer = setInterval(() => pending.push(poll(m.start)), m.everyMs);
  } else if (m.stop) {
    clearInterval(timer);
    try {
      parentPort.postMessage({ latencies: await Promise.all(pending) });
    } catch (err) {
      parentPort.postMessage({ error: String(err) });
    }
  }
});
