/**
 * `directory import` (docs/api/admin.md#directory-import-and-seed, docs/directory-format.md): JSON and NDJSON, line-numbered
 * errors, all-or-nothing, idempotent, change recording; the admin API and the CLI through it; and
 * the generated seed document, which must itself pass import validation.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { main } from '../../src/cli/main.js';
import { directoryJsonSchema } from '../../src/domain/directory/document-schema.js';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { importDirectory } from '../../src/domain/directory/import/import-directory.js';
import { documentToNdjson } from '../../src/domain/directory/import/ndjson.js';
import { parseDirectoryText } from '../../src/domain/directory/import/parse.js';
import { validateDirectory } from '../../src/domain/directory/import/validate.js';
import { isValidNpi } from '../../src/domain/directory/npi.js';
import { generateDirectory } from '../../src/domain/directory/seed.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { clientToken } from '../helpers/auth.js';
import { fixtureDocument, get } from './fixture.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const env = () => t.config.appEnv;
const count = async (table: 'providers' | 'provider_locations' | 'weekly_schedules' | 'directory_changes' | 'provider_location_insurance_plans') =>
  Number((await t.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('parsing', () => {
  test('JSON: every record keeps the line it starts on', () => {
    const text = '{\n  "specialties": [\n    {"id": "sp_a"},\n    {\n      "id": "sp_b"\n    }\n  ],\n  "providers": [{"id": "pr_x"}, {"id": "pr_y"}]\n}\n';
    const p = parseDirectoryText(text);
    expect('errors' in p).toBe(false);
    if ('errors' in p) return;
    expect(p.lines.specialties).toEqual([3, 4]);
    expect(p.lines.providers).toEqual([8, 8]);
  });

  test('NDJSON: one record per line, blank lines skipped, bad lines named', () => {
    const p = parseDirectoryText('{"type":"specialty","id":"sp_a"}\n\n{"type":"provider","id":"pr_x"}\n', 'ndjson');
    if ('errors' in p) throw new Error(JSON.stringify(p.errors));
    expect(p.lines.specialties).toEqual([1]);
    expect(p.lines.providers).toEqual([3]);
    const bad = parseDirectoryText('{"type":"specialty","id":"sp_a"}\n{"type":"wizard"}\nnot json\n', 'ndjson');
    expect('errors' in bad && bad.errors.map((e) => [e.line, e.field])).toEqual([[2, 'type'], [3, undefined]]);
  });

  test('invalid JSON names its line; unknown sections are refused', () => {
    const bad = parseDirectoryText('{\n "providers": [\n  {"id": }\n ]\n}', 'json');
    expect('errors' in bad && bad.errors[0]!.line).toBe(3);
    const unknown = parseDirectoryText('{"doctors": []}', 'json');
    expect('errors' in unknown && unknown.errors[0]!.field).toBe('doctors');
  });
});

describe('importDirectory', () => {
  test('reports every bad row with its line and reason, and writes nothing', async () => {
    const doc = fixtureDocument();
    doc.providers![1]!.npi = '1234567890'; // wrong check digit
    doc.providers![2]!.practice_id = 'pt_missing';
    (doc.locations![0] as Record<string, unknown>).time_zone = 'Mars/Olympus';
    (doc.locations![1] as Record<string, unknown>).zip_code = '123';
    doc.provider_locations![0]!.weekly_schedule = [{ weekday: 8, start: '09:00', end: '08:00' }];
    doc.provider_locations![1]!.weekly_schedule = [{ weekday: 1, start: '10:00', end: '09:00' }];
    doc.provider_locations![2]!.insurance_plan_ids = ['ip_missing'];
    doc.visit_reasons!.push({ ...doc.visit_reasons![0]! }); // duplicate id
    (doc.insurance_plans![0] as Record<string, unknown>).colour = 'blue';
    const text = JSON.stringify(doc, null, 2);
    const before = await count('providers');
    const r = await importDirectory(t.db, text, { env: env() });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const lines = text.split('\n');
    const lineOf = (needle: string, nth = 0) => lines.map((l, i) => [l, i + 1] as const).filter(([l]) => l.includes(needle))[nth]![1];
    const fields = Object.fromEntries(r.errors.map((e) => [e.field, e]));
    expect(fields['providers[1].npi']!.message).toMatch(/check digit/);
    expect(fields['providers[2].practice_id']!.message).toMatch(/unknown practice pt_missing/);
    expect(fields['locations[0].time_zone']!.message).toMatch(/Mars\/Olympus/);
    expect(fields['locations[1].zip_code']).toBeDefined();
    expect(fields['provider_locations[0].weekly_schedule[0].weekday']).toBeDefined();
    expect(fields['provider_locations[1].weekly_schedule[0].end']!.message).toMatch(/after start/);
    expect(fields['provider_locations[2].insurance_plan_ids[0]']!.message).toMatch(/ip_missing/);
    expect(fields['visit_reasons[3].id']!.message).toMatch(/duplicate of the record on line \d+/);
    expect(fields['insurance_plans[0]']!.message).toMatch(/unknown field colour/);
    // Lines point at the start of each record.
    expect(fields['providers[1].npi']!.line).toBe(lineOf('"id": "pr_a2"') - 1);
    expect(r.errors.every((e) => e.line > 0)).toBe(true);
    expect(r.errors.map((e) => e.line)).toEqual([...r.errors.map((e) => e.line)].sort((a, b) => a - b));
    expect(await count('providers')).toBe(before);
  });

  test('imports, then re-imports without duplicating or recording changes; a changed profile is recorded', async () => {
    const dev = await newDeveloper(t, 'Importer');
    const doc = fixtureDocument();
    const r1 = await importDirectory(t.db, documentToNdjson(doc), { env: env(), developerId: dev.developer_id });
    expect(r1).toMatchObject({ ok: true, summary: { providers: 7, locations: 6, provider_locations: 8, added: 7, removed: 0 } });
    const counts = { p: await count('providers'), pl: await count('provider_locations'), ws: await count('weekly_schedules'), ins: await count('provider_location_insurance_plans'), dc: await count('directory_changes') };
    const r2 = await importDirectory(t.db, JSON.stringify(doc), { env: env(), developerId: dev.developer_id });
    expect(r2).toMatchObject({ ok: true, summary: { added: 0, removed: 0, profile_updated: 0 } });
    expect({ p: await count('providers'), pl: await count('provider_locations'), ws: await count('weekly_schedules'), ins: await count('provider_location_insurance_plans'), dc: await count('directory_changes') }).toEqual(counts);

    const changed: DirectoryDocument = { providers: [{ ...doc.providers![0]!, last_name: 'Changed' }], provider_locations: [{ ...doc.provider_locations![2]!, active: false }] };
    const r3 = await importDirectory(t.db, JSON.stringify(changed), { env: env() });
    expect(r3).toMatchObject({ ok: true, summary: { removed: 1 } });
    const recorded = await t.db.selectFrom('directory_changes').select(['provider_location_id', 'change']).where('id', '>', String(counts.dc)).orderBy('provider_location_id').execute();
    expect(recorded).toEqual([
      { provider_location_id: 'pr_a1|lo_bk', change: 'profile_updated' },
      { provider_location_id: 'pr_a1|lo_nyc', change: 'profile_updated' },
      { provider_location_id: 'pr_a2|lo_phl', change: 'removed' },
    ]);
    // The developer's directory holds the imported provider-locations (active ones are served).
    const token = await clientToken(t, dev);
    const se = await get(t, '/v1/schedulable_entities', token);
    expect(se.body.total_count).toBe(6);
  });
});

describe('POST /admin/v1/directory/import', () => {
  const admin = { authorization: 'Bearer test-admin-token-0123456789abcdefgh' };

  test('JSON and NDJSON bodies; 400 names lines; 404 for an unknown developer; admin token required', async () => {
    const dev = await newDeveloper(t, 'Admin importer');
    const doc: DirectoryDocument = {
      ...fixtureDocument(),
      provider_locations: fixtureDocument().provider_locations!.filter((p) => p.provider_id === 'pr_a1'),
      facilities: [],
    };
    const ok = await t.app.inject({ method: 'POST', url: `/admin/v1/directory/import?developer_id=${dev.developer_id}`, headers: { ...admin, 'content-type': 'application/json' }, payload: JSON.stringify(doc) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ provider_locations: 2 });
    const token = await clientToken(t, dev);
    expect((await get(t, '/v1/schedulable_entities', token)).body.total_count).toBe(2);

    const nd = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/import', headers: { ...admin, 'content-type': 'application/x-ndjson' }, payload: documentToNdjson(doc) });
    expect(nd.statusCode).toBe(200);

    const badText = '{"type":"specialty","id":"sp_x","name":"X","care_category":"health","default_visit_reason_id":"pc_x"}\n{"type":"provider","id":"pr_q"}\n';
    const bad = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/import', headers: { ...admin, 'content-type': 'application/x-ndjson' }, payload: badText });
    expect(bad.statusCode).toBe(400);
    const body = bad.json() as { error_type: string; errors: { field: string; message: string; line: number }[] };
    expect(body.error_type).toBe('invalid_request');
    expect(body.errors).toContainEqual(expect.objectContaining({ line: 1, field: 'specialties[0].default_visit_reason_id', message: expect.stringMatching(/^line 1: unknown visit reason pc_x/) }));
    expect(body.errors.some((e) => e.line === 2 && e.field === 'providers[0]')).toBe(true);

    const nodev = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/import?developer_id=dv_nope', headers: { ...admin, 'content-type': 'application/json' }, payload: '{}' });
    expect(nodev.statusCode).toBe(404);
    const anon = await t.app.inject({ method: 'POST', url: '/admin/v1/directory/import', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(anon.statusCode).toBe(401);
  });

  test('the CLI imports through a running service (--url) and prints line-numbered errors', async () => {
    const base = await t.listen();
    const dir = await mkdtemp(join(tmpdir(), 'carebook-import-'));
    const good = join(dir, 'good.json');
    await writeFile(good, JSON.stringify(fixtureDocument(), null, 2));
    const out: string[] = [];
    const err: string[] = [];
    const ow = process.stdout.write.bind(process.stdout);
    const ew = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
    process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write;
    const bad = join(dir, 'bad.ndjson');
    await writeFile(bad, '{"type":"insurance_carrier","id":"ic_z","name":"Z"}\n{"type":"insurance_plan","id":"ip_z","carrier_id":"ic_nope","name":"Z","plan_type":"ppo","program_type":"commercial","care_categories":["health"],"coverage_area":{"is_national":true,"states":null}}\n');
    try {
      await main(['node', 'carebook', '--url', base, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'directory', 'import', good, '--json'], {});
      expect(process.exitCode ?? 0).toBe(0);
      await main(['node', 'carebook', '--url', base, '--admin-token', 'test-admin-token-0123456789abcdefgh', 'directory', 'import', bad], {});
      expect(process.exitCode).toBe(1);
    } finally {
      process.stdout.write = ow;
      process.stderr.write = ew;
      process.exitCode = 0;
    }
    expect(JSON.parse(out.join(''))).toMatchObject({ provider_locations: 8 });
    expect(err.join('')).toContain(`${bad}:2: insurance_plans[0].carrier_id: unknown insurance carrier ic_nope`);
    expect(await readFile(good, 'utf8')).toContain('pr_a1');
  });
});

describe('generated seed document', () => {
  test('is deterministic, has valid unique NPIs and real ZIPs, and passes import validation', async () => {
    const a = generateDirectory(300, 7);
    expect(generateDirectory(300, 7)).toEqual(a);
    expect(generateDirectory(300, 8)).not.toEqual(a);
    const npis = a.providers!.map((p) => p.npi);
    expect(npis.every(isValidNpi)).toBe(true);
    expect(new Set(npis).size).toBe(npis.length);
    const kinds = new Set(a.provider_locations!.map((p) => `${p.provider_location_type}/${p.confirmation_type}`));
    expect(kinds).toEqual(new Set(['in_person_provider/auto', 'in_person_provider/manual', 'virtual_provider/auto', 'virtual_provider/manual']));
    const parsed = parseDirectoryText(documentToNdjson(a), 'ndjson');
    if ('errors' in parsed) throw new Error(JSON.stringify(parsed.errors.slice(0, 5)));
    const checked = await validateDirectory(t.db, env(), parsed);
    expect('errors' in checked ? checked.errors.slice(0, 5) : []).toEqual([]);
  });

  test('docs/directory.schema.json is the schema the importer uses', async () => {
    const onDisk = JSON.parse(await readFile(new URL('../../docs/directory.schema.json', import.meta.url), 'utf8')) as unknown;
    expect(onDisk).toEqual(directoryJsonSchema());
  });
});
