/**
 * The control server of `npm run steadiness` (bench/host-steadiness.ts): bare Fastify 5, no
 * plugins, no logging, one route `GET /work` that spins a fixed deterministic loop of
 * CONTROL_WORK_ITERATIONS (default 1,100,000: about 1.5–2 ms a request on the 2-vCPU
 * development VM) and answers `{ "ok": true, "n": <the loop's result> }`. Listens on
 * 127.0.0.1:CONTROL_PORT (default 18090) and prints `listening` once it does.
 */
import Fastify from 'fastify';

const PORT = Number(process.env.CONTROL_PORT ?? 18090);
const ITERATIONS = Number(process.env.CONTROL_WORK_ITERATIONS ?? 1_100_000);

/** The route's CPU work: the same loop as the steadiness spinner, `iterations` long. */
function work(iterations: number): number {
  let x = 0;
  for (let i = 0; i < iterations; i++) x += i % 7;
  return x;
}

async function main(): Promise<void> {
  if (!(PORT > 0 && PORT < 32768)) throw new Error(`CONTROL_PORT must be in 1–32767 (below the ephemeral range), got ${process.env.CONTROL_PORT}`);
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get('/work', async () => ({ ok: true, n: work(ITERATIONS) }));
  await app.listen({ port: PORT, host: '127.0.0.1' });
  const close = () => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', close);
  process.once('SIGINT', close);
  process.stdout.write('listening\n');
}

await main();
