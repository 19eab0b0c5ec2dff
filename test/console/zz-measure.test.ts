import { it } from 'vitest';
import { CompiledQuery } from 'kysely';
import { requestLogFlushQuery } from '../../src/db/fast/request-log-flush.js';
import { freshDatabase, engineName } from '../helpers/db.js';
const OLD = `INSERT INTO request_log (env, developer_id, client_id, at, method, path, status, latency_ms, request_id, error)
  SELECT env, developer_id, client_id, at, method, path, status, latency_ms, request_id, error
  FROM json_to_recordset($1::json) AS r(env text, developer_id text, client_id text, at timestamptz, method text, path text,
    status smallint, latency_ms real, request_id text, error jsonb)`;
it('measures', async () => {
  const h = await freshDatabase();
  const batch = Array.from({ length: 500 }, (_, i) => ({ env: 'sandbox', developer_id: `dv_${i % 20}`, client_id: `cl_${i % 40}`, at: new Date(), method: 'GET', path: '/v1/x', status: i % 10 ? 200 : 404, latency_ms: 1.5, request_id: `r${i}`, error: null }));
  const run = async (q: () => CompiledQuery) => { for (let i = 0; i < 5; i++) await h.db.executeQuery(q()); const t0 = performance.now(); for (let i = 0; i < 40; i++) await h.db.executeQuery(q()); return (performance.now() - t0) / 40; };
  const old = await run(() => CompiledQuery.raw(OLD, [JSON.stringify(batch)]));
  const nu = await run(() => requestLogFlushQuery(batch));
  console.log(`${engineName}: 500-entry flush old ${old.toFixed(2)} ms, new ${nu.toFixed(2)} ms`);
  await h.close();
}, 120_000);
