/**
 * docs/quickstart.md runs: each sample file of docs/quickstart/ appears verbatim in the document, and
 * the five steps (token, search, availability, book, webhook) run against a real listening service
 * with the sandbox's demo directory.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bootstrapSandbox } from '../../src/domain/demo/bootstrap.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { testApp, testPort, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';

const SAMPLES = ['1-token.mjs', '2-search.mjs', '3-availability.mjs', '4-book.mjs', '5-webhook.mjs'];

describe('docs/quickstart.md', () => {
  let t: TestApp;
  let baseUrl: string;
  let creds: NewDeveloper;
  let dataDir: string;

  beforeAll(async () => {
    t = await testApp();
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-quickstart-'));
    creds = (await bootstrapSandbox(t.db, { dataDir, publicBaseUrl: t.config.publicBaseUrl, demoProviders: 30 })).credentials!;
    baseUrl = await t.listen();
  });
  afterAll(async () => {
    await t?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('includes every sample verbatim', async () => {
    const doc = await readFile('docs/quickstart.md', 'utf8');
    for (const f of SAMPLES) expect(doc, f).toContain(await readFile(`docs/quickstart/${f}`, 'utf8'));
  });

  it('runs: token, search, availability, book, verified webhook', async () => {
    // A ZIP code and specialty of the demo directory with availability.
    const token = await clientToken(t, creds);
    const entities = (await t.app.inject({ url: '/v1/schedulable_entities?page_size=100', headers: bearer(token) })).json().data.schedulable_entities as {
      id: string; main_specialty_id?: string; new_patient_availability: { next_28_days: string };
    }[];
    const entity = entities.find((e) => e.main_specialty_id && e.new_patient_availability.next_28_days === 'available' && !/^pr_(pending|failed|manual|reschedulefailed)\|/.test(e.id))!;
    const pl = (await t.app.inject({ url: `/v1/provider_locations/${encodeURIComponent(entity.id)}`, headers: bearer(token) })).json().data;

    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const { quickstart } = (await import(new URL('../../docs/quickstart/run.mjs', import.meta.url).href)) as {
      quickstart: (o: Record<string, unknown>) => Promise<{ appointment: { appointment_id: string; appointment_status: string }; events: { event_type: string }[] }>;
    };
    const out = await quickstart({
      baseUrl,
      clientId: creds.client_id,
      clientSecret: creds.client_secret,
      zipCode: pl.location.zip_code,
      specialtyId: entity.main_specialty_id,
      receiverPort: testPort(),
    });
    vi.restoreAllMocks();
    expect(out.appointment).toMatchObject({ appointment_id: expect.any(String), appointment_status: 'pending_booking' });
    expect(out.events).toHaveLength(1);
    expect(out.events[0]!.event_type).toBe('appointment_updated');
  });

  it('the verifier refuses a tampered body and a stale timestamp', async () => {
    const { verify } = (await import(new URL('../../docs/quickstart/5-webhook.mjs', import.meta.url).href)) as { verify: (raw: string, h: Record<string, string>, key: string) => boolean };
    const { createHmac } = await import('node:crypto');
    const key = Buffer.from('k').toString('base64');
    const ts = String(Math.floor(Date.now() / 1000));
    const sign = (t: string, body: string) => `v1:${createHmac('sha256', Buffer.from(key, 'base64')).update(`${t}.${body}`).digest('base64')}`;
    expect(verify('{"a":1}', { 'webhook-timestamp': ts, 'webhook-signature': `v1:AAAA;${sign(ts, '{"a":1}')}` }, key)).toBe(true);
    expect(verify('{"a":2}', { 'webhook-timestamp': ts, 'webhook-signature': sign(ts, '{"a":1}') }, key)).toBe(false);
    const old = String(Number(ts) - 3600);
    expect(verify('{"a":1}', { 'webhook-timestamp': old, 'webhook-signature': sign(old, '{"a":1}') }, key)).toBe(false);
  });
});
