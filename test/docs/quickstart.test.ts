/**
 * docs/quickstart.md runs: every ```js block of the document is a sample file of docs/quickstart/ and
 * every sample file is a block; the five steps (token, search, availability, book, webhook) run
 * against a real listening service with the sandbox's demo directory, and so do the document's
 * `node docs/quickstart/run.mjs …` commands, as shown.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bootstrapSandbox } from '../../src/domain/demo/bootstrap.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { testApp, testPort, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';

const run = promisify(execFile);
const SAMPLES = ['1-token.mjs', '2-search.mjs', '3-availability.mjs', '4-book.mjs', '5-webhook.mjs'];
const RUNNER = 'run.mjs';

/** The bodies of the document's fenced blocks of one language, without the fences. */
function fencedBlocks(doc: string, lang: string): string[] {
  return [...doc.matchAll(new RegExp(`^\`\`\`${lang}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1]!);
}

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

  it('every js block is a sample file and every sample file is a js block', async () => {
    const doc = await readFile('docs/quickstart.md', 'utf8');
    expect((await readdir('docs/quickstart')).sort(), 'docs/quickstart/ holds the samples and run.mjs').toEqual([...SAMPLES, RUNNER].sort());
    const blocks = fencedBlocks(doc, 'js');
    const files = await Promise.all(SAMPLES.map((f) => readFile(`docs/quickstart/${f}`, 'utf8')));
    expect(blocks.length, 'one ```js block per sample file').toBe(files.length);
    // In order: block i is sample i, byte for byte.
    blocks.forEach((block, i) => expect(block, `block ${i + 1} of docs/quickstart.md equals docs/quickstart/${SAMPLES[i]}`).toBe(files[i]));
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

  it('the shown `node docs/quickstart/run.mjs` commands run as written', async () => {
    const doc = await readFile('docs/quickstart.md', 'utf8');
    const commands = fencedBlocks(doc, 'sh')
      .flatMap((b) => b.split('\n'))
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter((line) => line.startsWith(`node docs/quickstart/${RUNNER}`));
    const literal = commands.filter((c) => !c.includes('<'));
    expect(literal.length, 'a command to copy as is').toBeGreaterThan(0);
    const runRunner = (args: string[]) =>
      run('node', [`docs/quickstart/${RUNNER}`, ...args], { env: { ...process.env, BASE_URL: baseUrl, DATA_DIR: dataDir, RECEIVER_PORT: String(testPort()) } });
    const picked: string[][] = [];
    for (const command of literal) {
      const { stdout } = await runRunner(command.split(/\s+/).slice(2));
      expect(stdout, command).toMatch(/booked \S+ pending_booking/);
      expect(stdout, command).toContain('webhook received: appointment_updated');
      const m = /searching (\S+) near (\d{5})/.exec(stdout);
      if (m) picked.push([m[2]!, m[1]!]);
    }
    // The named form, with the pair the first command printed.
    expect(picked.length).toBeGreaterThan(0);
    const named = await runRunner(picked[0]!);
    expect(named.stdout).toContain(`searching ${picked[0]![1]} near ${picked[0]![0]}`);
    expect(named.stdout).toContain('webhook received: appointment_updated');
    // No provider of that specialty near that ZIP code: a message that says what to do, exit code 1.
    const err = (await runRunner(['99950', 'sp_sandbox']).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(err.code).toBe(1);
    expect(err.stderr).toMatch(/No provider of sp_sandbox with open times near 99950\. Run without arguments/);
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
