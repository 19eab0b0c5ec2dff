/**
 * Every directory write leaves the planner with statistics (`analyzeDirectory`): a small, just-written
 * directory planned without them took seconds per provider read on PostgreSQL.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { importDirectory } from '../../src/domain/directory/import/import-directory.js';
import { seedDirectory } from '../../src/domain/directory/seed-directory.js';
import { engineName } from '../helpers/db.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { fixtureDocument } from './fixture.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

/** Rows the planner believes `table` holds (-1: never analysed). */
const planned = async (table: string) =>
  Number((await sql<{ n: number }>`SELECT reltuples AS n FROM pg_class WHERE oid = ${table}::regclass`.execute(t.db)).rows[0]!.n);

describe(`directory writes refresh planner statistics (${engineName})`, () => {
  test('a small import (far below any bulk threshold) is analysed', async () => {
    expect(await planned('provider_locations')).toBe(-1);
    const r = await importDirectory(t.db, JSON.stringify(fixtureDocument()), { env: 'sandbox' });
    expect(r.ok).toBe(true);
    const rows = Number((await t.db.selectFrom('provider_locations').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    expect(await planned('provider_locations')).toBe(rows);
    expect(await planned('providers')).toBeGreaterThan(0);
    // The weekly schedules' writes bump their providers' calendar versions, which availability
    // reads by provider (an index range over the environment's whole table without statistics).
    const versions = Number((await sql<{ n: number }>`SELECT count(*)::int AS n FROM calendar_versions`.execute(t.db)).rows[0]!.n);
    expect(versions).toBeGreaterThan(0);
    expect(await planned('calendar_versions')).toBe(versions);
  });

  test('a seed is analysed', async () => {
    const before = await planned('provider_locations');
    await seedDirectory(t.db, { env: 'sandbox', providers: 5, seed: 3 });
    expect(await planned('provider_locations')).toBeGreaterThan(before);
  });
});
