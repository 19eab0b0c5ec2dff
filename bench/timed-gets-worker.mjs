// A worker thread that times sequential GETs over one keep-alive connection for
// bench/directory-reads.ts, off the event loop of the server being measured. Messages:
// {id, urls, headers} in; {id, ms: number[], statuses: number[]} out (or {id, error}). Each body is
// read to its end and counted, not decoded.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url, headers) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.get(url, { headers, agent }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => resolve({ ms: performance.now() - t0, status: res.statusCode }));
    });
    req.on('error', reject);
  });
}

parentPort.on('message', async ({ id, urls, headers }) => {
  try {
    const ms = [];
    const statuses = [];
    for (const url of urls) {
      const r = await get(url, headers);
      ms.push(r.ms);
      statuses.push(r.status);
    }
    parentPort.postMessage({ id, ms, statuses });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err) });
  }
});
