/**
 * Which process runs which background job (src/jobs/registry.ts), against a real database: `serve`
 * runs every job once and `/metrics` shows their counters; the API kicks its process's
 * insurance-mapping job; `serve --no-workers` runs none; `carebook worker` runs every job.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApp } from '../../src/http/app.js';
import { insuranceMappingsJob } from '../../src/jobs/insurance-mappings.js';
import type { JobDeps } from '../../src/jobs/job-deps.js';
import { JOBS, startJobs } from '../../src/jobs/registry.js';
import { startService, startWorkerProcess } from '../../src/server.js';
import { engineName } from '../helpers/db.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { loadFixture, PL, type DirectoryFixture } from '../directory/fixture.js';

const ALL = ['evaluator', 'webhook-delivery', 'insurance-mappings', 'availability-summary-refresh', 'table-maintenance', 'request-log-prune'];

describe(`background jobs per process (${engineName})`, () => {
  let t: TestApp;
  let f: DirectoryFixture;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-jobs-'));
    // No job beside the test app: the processes started below run their own.
    t = await testApp({ DATA_DIR: dataDir }, { insuranceMappingJob: false });
    f = await loadFixture(t);
  });
  afterAll(async () => {
    await t?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const requests = async () => (await t.db.selectFrom('insurance_mapping_requests').select(['id', 'status']).orderBy('created_at').execute()).map((r) => r.status);
  const requestMapping = (url: string) =>
    fetch(`${url}/v1/provider_locations/${encodeURIComponent(PL.a1bk)}/insurance_mappings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${f.tokenA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ insurance_plan_ids: ['ip_acme_ppo'], operation: 'Add' }),
    });
  /** `job` label → value of one job metric in a /metrics text. */
  const metric = (text: string, name: string): Map<string, number> =>
    new Map([...text.matchAll(new RegExp(`^${name}\\{job="([^"]+)"\\} (\\S+)$`, 'gm'))].map((m) => [m[1]!, Number(m[2])]));
  async function waitFor(cond: () => Promise<boolean>, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (!(await cond())) {
      if (Date.now() > end) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('the registry lists each job once', () => {
    const deps = { db: t.db, config: t.config, engine: t.handle.engine };
    expect(JOBS.map((make) => make(deps).name)).toEqual(ALL);
  });

  it('serve runs every job once, the insurance-mapping job included; /metrics counts the passes', async () => {
    const service = await startService(t.config, { handle: t.handle, quiet: true });
    try {
      const res = await requestMapping(service.url);
      expect(res.status, await res.text()).toBe(202);
      await waitFor(async () => (await requests()).at(-1) === 'applied', 15_000);
      const text = await (await fetch(`${service.url}/metrics`)).text();
      const passes = metric(text, 'carebook_job_passes_total');
      expect([...passes.keys()].sort()).toEqual([...ALL].sort());
      expect(text.match(/^carebook_job_passes_total\{job="insurance-mappings"\}/gm)).toHaveLength(1);
      expect(passes.get('insurance-mappings')).toBeGreaterThanOrEqual(1);
      expect(passes.get('evaluator')).toBeGreaterThanOrEqual(1);
      expect(metric(text, 'carebook_job_items_total').get('insurance-mappings')).toBeGreaterThanOrEqual(1);
      expect([...metric(text, 'carebook_job_failures_total').values()].every((n) => n === 0)).toBe(true);
      expect(metric(text, 'carebook_job_last_pass_duration_seconds').get('evaluator')).toBeGreaterThanOrEqual(0);
      expect(text).toContain('# TYPE carebook_job_passes_total counter');
      // The existing metrics are still there.
      expect(text).toContain('carebook_http_request_duration_seconds');
    } finally {
      await service.close();
    }
  }, 30_000);

  it("the API kicks its process's insurance-mapping job after an accepted request", async () => {
    // The job's timed passes never come during the test: only the kick can apply the request.
    const slow = (deps: JobDeps) => ({ ...insuranceMappingsJob(deps), intervalMs: 600_000, firstPassAfterMs: 600_000 });
    const jobs = startJobs({ db: t.db, config: t.config, engine: t.handle.engine }, pino({ level: 'silent' }), [slow]);
    const app = await buildApp({ config: t.config, db: t.db, jobs });
    try {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/provider_locations/${encodeURIComponent(PL.a1bk)}/insurance_mappings`,
        headers: { authorization: `Bearer ${f.tokenA}` },
        payload: { insurance_plan_ids: ['ip_acme_ppo'], operation: 'Remove' },
      });
      expect(res.statusCode, res.body).toBe(202);
      await waitFor(async () => (await requests()).at(-1) === 'applied', 15_000);
      expect(jobs.stats()).toEqual([expect.objectContaining({ job: 'insurance-mappings', passes: 1, items: 1, failures: 0 })]);
    } finally {
      await jobs.stop();
      await app.close();
    }
  }, 30_000);

  it('serve --no-workers runs none: a mapping request stays pending, /metrics has no job metrics', async () => {
    const service = await startService(t.config, { handle: t.handle, quiet: true, workers: false });
    try {
      const res = await requestMapping(service.url);
      expect(res.status, await res.text()).toBe(202);
      await new Promise((r) => setTimeout(r, 600));
      expect((await requests()).at(-1)).toBe('pending');
      const text = await (await fetch(`${service.url}/metrics`)).text();
      expect(text).not.toContain('carebook_job_');
      expect(text).toContain('carebook_http_request_duration_seconds');
    } finally {
      await service.close();
    }
  }, 30_000);

  it('carebook worker runs every job: it applies the pending request and refreshes the summaries', async () => {
    expect((await requests()).at(-1)).toBe('pending');
    await t.db.deleteFrom('availability_summaries').execute();
    const worker = await startWorkerProcess(t.config, { handle: t.handle, quiet: true });
    try {
      expect(worker.jobs).toEqual(ALL);
      await waitFor(async () => (await t.db.selectFrom('availability_summaries').select('provider_location_id').execute()).length > 0, 15_000);
      await waitFor(async () => (await requests()).every((s) => s === 'applied'), 15_000);
    } finally {
      await worker.close();
    }
    // Stopped: nothing runs after close.
    await t.db.deleteFrom('availability_summaries').execute();
    await new Promise((r) => setTimeout(r, 300));
    expect(await t.db.selectFrom('availability_summaries').select('provider_location_id').execute()).toEqual([]);
  }, 30_000);
});
