// A worker thread that times single GETs for bench/directory.ts, so that the client's own work
// (receiving several megabytes) runs off the event loop of the server being measured, as
// autocannon's does for every other figure. Messages: {id, url, headers} in; {id, ms, status,
// bytes} out. The body is read to its end and counted, not decoded.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
parentPort.on('message', ({ id, url, headers }) => {
  const t0 = performance.now();
  const req = http.get(url, { headers, agent }, (res) => {
    let bytes = 0;
    res.on('data', (chunk) => (bytes += chunk.length));
    res.on('end', () => parentPort.postMessage({ id, ms: performance.now() - t0, status: res.statusCode, bytes }));
  });
  req.on('error', (err) => parentPort.postMessage({ id, error: String(err) }));
});
