/**
 * Where the insurance-mapping job runs (docs/api/deployment.md#scale-out): an API process without
 * background workers (`serve --no-workers`) only records requests; the background workers
 * (`carebook worker`, or `serve` with workers) apply them.
 */
import pino from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startJobs } from '../../src/jobs/registry.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { loadFixture, PL, type DirectoryFixture } from './fixture.js';
import { scaled } from '../helpers/scale.js';

let t: TestApp;
let f: DirectoryFixture;
beforeAll(async () => {
  t = await testApp({}, { insuranceMappingJob: false });
  f = await loadFixture(t);
});
afterAll(async () => t?.close());

const status = async () => (await t.db.selectFrom('insurance_mapping_requests').select('status').execute()).map((r) => r.status);

test('an API without workers records the request; the background workers apply it', async () => {
  const res = await t.app.inject({
    method: 'POST',
    url: `/v1/provider_locations/${encodeURIComponent(PL.a1bk)}/insurance_mappings`,
    headers: { authorization: `Bearer ${f.tokenA}` },
    payload: { insurance_plan_ids: ['ip_acme_ppo'], operation: 'Add' },
  });
  expect(res.statusCode, res.body).toBe(202);
  await new Promise((r) => setTimeout(r, 500));
  expect(await status()).toEqual(['pending']);

  const workers = startJobs({ db: t.db, config: t.config, engine: t.handle.engine }, pino({ level: 'silent' }));
  try {
    const deadline = Date.now() + scaled(15_000);
    while ((await status())[0] !== 'applied' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await status()).toEqual(['applied']);
  } finally {
    await workers.stop();
  }
}, scaled(30_000));
