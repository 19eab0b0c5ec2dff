/**
 * What the 72-hour summary calls a profile update (docs/api/directory.md#schedulable-entities): a change to the NPI, name,
 * specialty, address or default visit reason shown by a provider-location. Other edits (statement,
 * photo, phone, a provider-location's booking settings) are not.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { DirectoryDocument } from '../../src/domain/directory/document.js';
import { importDirectory } from '../../src/domain/directory/import/import-directory.js';
import { engineName } from '../helpers/db.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { fixtureDocument } from './fixture.js';

let t: TestApp;
let doc: DirectoryDocument;
beforeAll(async () => {
  t = await testApp();
  const dev = await newDeveloper(t, 'Profiles');
  doc = fixtureDocument();
  const r = await importDirectory(t.db, JSON.stringify(doc), { env: 'sandbox', developerId: dev.developer_id });
  expect(r.ok).toBe(true);
});
afterAll(async () => t?.close());

/** Imports `part` and returns the provider-locations it recorded as profile updates. */
async function profileUpdates(part: DirectoryDocument): Promise<string[]> {
  const last = await t.db.selectFrom('directory_changes').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
  const r = await importDirectory(t.db, JSON.stringify(part), { env: 'sandbox' });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  const rows = await t.db.selectFrom('directory_changes').select(['provider_location_id', 'change'])
    .where('id', '>', String(last.id ?? 0)).orderBy('provider_location_id').execute();
  expect(rows.every((x) => x.change === 'profile_updated')).toBe(true);
  return rows.map((x) => x.provider_location_id);
}

const plsOf = (providerId: string) => doc.provider_locations!.filter((p) => p.provider_id === providerId && p.active !== false).map((p) => `${p.provider_id}|${p.location_id}`).sort();
const plsAt = (locationId: string) => doc.provider_locations!.filter((p) => p.location_id === locationId && p.active !== false).map((p) => `${p.provider_id}|${p.location_id}`).sort();

describe(`profile updates in the change summary (${engineName})`, () => {
  test('statement, photo, phone and booking settings are not profile updates', async () => {
    const p = doc.providers![0]!;
    const l = doc.locations![0]!;
    const pl = doc.provider_locations![0]!;
    expect(await profileUpdates({
      providers: [{ ...p, statement: 'A new statement', photo_url: 'https://img.example.org/new.jpg', languages: ['English'] }],
      locations: [{ ...l, phone_number: '2125550199' }],
      provider_locations: [{ ...pl, confirmation_type: pl.confirmation_type === 'manual' ? 'auto' : 'manual' }],
    })).toEqual([]);
  });

  test('a name, NPI-bearing provider field or default visit reason change updates every provider-location of the provider', async () => {
    const p = doc.providers![1]!;
    expect(await profileUpdates({ providers: [{ ...p, last_name: 'Renamed' }] })).toEqual(plsOf(p.id));
  });

  test('an address change updates every provider-location at the location', async () => {
    const l = doc.locations![0]!;
    expect(await profileUpdates({ locations: [{ ...l, address1: '2 Other St' }] })).toEqual(plsAt(l.id));
  });

  test('a renamed specialty updates the provider-locations of its providers (their main_specialty_name changes)', async () => {
    const s = doc.specialties!.find((x) => x.id === 'sp_dent')!;
    const holders = doc.providers!.filter((p) => p.main_specialty_id === 'sp_dent' || p.specialty_ids?.includes('sp_dent')).flatMap((p) => plsOf(p.id)).sort();
    expect(holders.length).toBeGreaterThan(0);
    expect(await profileUpdates({ specialties: [{ ...s, name: `${s.name} (renamed)` }] })).toEqual(holders);
  });
});
