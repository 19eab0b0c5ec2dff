/**
 * Writes a directory document into the database: idempotent upserts keyed by the directory's own
 * ids, in batches, inside the caller's transaction (so an import is all-or-nothing). Changes to
 * provider-locations are recorded for the 72-hour change summary (interface.md §2.4).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { providerLocationId, type DirectoryDocument } from './document.js';

const BATCH = 500;

export interface WriteSummary {
  practices: number;
  specialties: number;
  visit_reasons: number;
  insurance_carriers: number;
  insurance_plans: number;
  providers: number;
  locations: number;
  provider_locations: number;
  facilities: number;
  added: number;
  removed: number;
  profile_updated: number;
}

/** Ids per statement when the search rows are refreshed (one `text[]` parameter each). */
const SEARCH_BATCH = 5000;

function chunks<T>(rows: T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * Rebuilds the search rows (`provider_location_search`, migration 0008) of the given
 * provider-locations from their provider and location: one row per term of the provider
 * (`sp:` each of `specialty_ids`, `vr:` each of `visit_reason_ids`), none for an inactive one.
 * The same statement as the migration's fill, limited to `ids`.
 */
export async function refreshSearchRows(trx: Kysely<Database>, env: Env, ids: string[]): Promise<void> {
  for (const batch of chunks(ids, SEARCH_BATCH)) {
    const list = sql`${sql.val(batch)}::text[]`;
    await sql`DELETE FROM provider_location_search WHERE env = ${env} AND provider_location_id = ANY(${list})`.execute(trx);
    await sql`
      INSERT INTO provider_location_search (env, term, provider_location_id, is_virtual, state, latitude, longitude)
      SELECT pl.env, t.term, pl.id, l.is_virtual OR pl.provider_location_type = 'virtual_provider', l.state, l.latitude, l.longitude
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      CROSS JOIN LATERAL (
        SELECT 'sp:' || s FROM unnest(p.specialty_ids) s
        UNION
        SELECT 'vr:' || v FROM unnest(p.visit_reason_ids) v
      ) t(term)
      WHERE pl.env = ${env} AND pl.id = ANY(${list}) AND pl.active`.execute(trx);
  }
}

/**
 * Upserts rows keyed by (env, id); returns the ids that were inserted or really changed (rows whose
 * compared columns are equal are left untouched, so re-importing the same file changes nothing).
 */
async function upsert(
  trx: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  table: string,
  rows: Record<string, unknown>[],
  compare: string[],
  extraSet: Record<string, unknown> = {},
): Promise<{ inserted: string[]; updated: string[] }> {
  const inserted: string[] = [];
  const updated: string[] = [];
  for (const batch of chunks(rows)) {
    const res = await trx
      .insertInto(table)
      .values(batch)
      .onConflict((oc) =>
        oc
          .columns(['env', 'id'])
          .doUpdateSet(() => ({
            ...Object.fromEntries(compare.map((c) => [c, sql.ref(`excluded.${c}`)])),
            ...extraSet,
          }))
          .where(
            sql<boolean>`(${sql.join(compare.map((c) => sql.ref(`${table}.${c}`)))}) IS DISTINCT FROM (${sql.join(
              compare.map((c) => sql.ref(`excluded.${c}`)),
            )})`,
          ),
      )
      .returning(['id', sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    for (const r of res as { id: string; inserted: boolean }[]) (r.inserted ? inserted : updated).push(r.id);
  }
  return { inserted, updated };
}

/**
 * Refreshes the planner's statistics of the directory tables after a write. Without them a
 * just-written directory is planned as if every table held one row: on the demo directory (~270
 * provider-locations) a provider read took 3 s of nested loops instead of under a millisecond, until
 * autovacuum analysed the tables minutes later. Run it after the write's transaction commits.
 */
export async function analyzeDirectory(db: Kysely<Database>): Promise<void> {
  await sql`ANALYZE providers, locations, provider_locations, developer_provider_locations, provider_location_search, weekly_schedules,
    provider_location_insurance_plans, practices, practice_insurance_plans, facilities, directory_changes,
    specialties, visit_reasons, insurance_plans`.execute(db);
}

/**
 * The ids of `rows` that already exist and whose `columns` differ from what is stored: read before an
 * upsert, so that only changes to the fields interface.md §2.4 names count as a profile update.
 */
async function changedColumns(
  trx: Kysely<any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  table: string,
  env: Env,
  rows: Record<string, unknown>[],
  columns: string[],
): Promise<Set<string>> {
  const out = new Set<string>();
  const norm = (v: unknown): string => JSON.stringify(v === undefined ? null : v instanceof Date ? v.toISOString() : v);
  for (const batch of chunks(rows)) {
    const stored = await trx
      .selectFrom(table)
      .select(['id', ...columns])
      .where('env', '=', env)
      .where('id', 'in', batch.map((r) => r.id))
      .execute();
    const byId = new Map((stored as Record<string, unknown>[]).map((r) => [r.id, r]));
    for (const r of batch) {
      const old = byId.get(r.id);
      if (old && columns.some((c) => norm(old[c]) !== norm(r[c]))) out.add(String(r.id));
    }
  }
  return out;
}

/**
 * Replaces the child rows of the given parents: deletes theirs and inserts `rows`, in batches.
 * Duplicate child rows (the same plan listed twice) are inserted once.
 */
async function replaceChildren(
  trx: Transaction<Database>,
  table: 'practice_insurance_plans' | 'provider_location_insurance_plans' | 'weekly_schedules',
  parentColumn: 'practice_id' | 'provider_location_id',
  parentIds: string[],
  rows: Record<string, unknown>[],
  env: Env,
): Promise<void> {
  const t = trx as unknown as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const batch of chunks(parentIds)) {
    await t.deleteFrom(table).where('env', '=', env).where(parentColumn, 'in', batch).execute();
  }
  const unique = table === 'weekly_schedules' ? rows : [...new Map(rows.map((r) => [JSON.stringify(r), r])).values()];
  for (const batch of chunks(unique)) await t.insertInto(table).values(batch).execute();
}

/** Writes `doc` for environment `env`; with `developerId`, its provider-locations join that developer's directory. */
export async function writeDirectory(
  trx: Transaction<Database>,
  env: Env,
  doc: DirectoryDocument,
  opts: { developerId?: string; onProgress?: (done: number, total: number) => void } = {},
): Promise<WriteSummary> {
  const t = trx as unknown as Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  // Directory writers queue on the `directory_version` row before they lock any directory row. Its
  // triggers (migration 0010) move it after a transaction's first directory statement; without
  // this, two writers that each locked rows first (two processes upserting the sandbox fixtures at
  // once) could each wait for the other's row and version lock: a deadlock.
  await sql`SELECT version FROM directory_version FOR UPDATE`.execute(trx);
  // Progress counts records of every section; each step reports after it is written.
  const total =
    (doc.specialties?.length ?? 0) + (doc.visit_reasons?.length ?? 0) + (doc.insurance_carriers?.length ?? 0) +
    (doc.insurance_plans?.length ?? 0) + (doc.practices?.length ?? 0) + (doc.providers?.length ?? 0) +
    (doc.locations?.length ?? 0) + 2 * (doc.provider_locations?.length ?? 0) + (doc.facilities?.length ?? 0);
  let done = 0;
  const progress = (n: number): void => {
    done += n;
    opts.onProgress?.(done, total);
  };
  const now = sql<Date>`now()`;
  const changedProviders = new Set<string>();
  const changedLocations = new Set<string>();

  // Specialties and visit reasons refer to each other (default visit reason); the FK runs one way only.
  const specialtyRows = (doc.specialties ?? []).map((s) => ({ env, ...s }));
  // A renamed specialty changes `main_specialty_name` of its providers' entities: a profile update.
  const renamedSpecialties = await changedColumns(t, 'specialties', env, specialtyRows, ['name']);
  await upsert(t, 'specialties', specialtyRows, ['name', 'care_category', 'default_visit_reason_id']);
  await upsert(
    t,
    'visit_reasons',
    (doc.visit_reasons ?? []).map((v) => ({
      env,
      id: v.id,
      name: v.name,
      specialty_id: v.specialty_id,
      duration_new_minutes: v.duration_minutes.new,
      duration_existing_minutes: v.duration_minutes.existing,
    })),
    ['name', 'specialty_id', 'duration_new_minutes', 'duration_existing_minutes'],
  );
  await upsert(t, 'insurance_carriers', (doc.insurance_carriers ?? []).map((c) => ({ env, ...c })), ['name']);
  await upsert(
    t,
    'insurance_plans',
    (doc.insurance_plans ?? []).map((p) => ({
      env,
      id: p.id,
      carrier_id: p.carrier_id,
      name: p.name,
      plan_type: p.plan_type,
      program_type: p.program_type,
      status: p.status ?? 'active',
      care_categories: p.care_categories,
      is_national: p.coverage_area.is_national,
      states: p.coverage_area.is_national ? null : p.coverage_area.states,
    })),
    ['carrier_id', 'name', 'plan_type', 'program_type', 'status', 'care_categories', 'is_national', 'states'],
    { updated_at: now },
  );
  await upsert(
    t,
    'practices',
    (doc.practices ?? []).map((p) => ({
      env,
      id: p.id,
      name: p.name,
      insurance_managed_at_practice: p.insurance_managed_at_practice ?? false,
    })),
    ['name', 'insurance_managed_at_practice'],
    { updated_at: now },
  );
  await replaceChildren(
    trx,
    'practice_insurance_plans',
    'practice_id',
    (doc.practices ?? []).filter((p) => p.insurance_plan_ids).map((p) => p.id),
    (doc.practices ?? []).flatMap((p) => (p.insurance_plan_ids ?? []).map((insurance_plan_id) => ({ env, practice_id: p.id, insurance_plan_id }))),
    env,
  );
  progress((doc.specialties?.length ?? 0) + (doc.visit_reasons?.length ?? 0) + (doc.insurance_carriers?.length ?? 0) +
    (doc.insurance_plans?.length ?? 0) + (doc.practices?.length ?? 0));

  const providerCols = [
    'npi', 'practice_id', 'first_name', 'last_name', 'title', 'gender_identity', 'statement', 'photo_url', 'languages',
    'certifications', 'education_institutions', 'main_specialty_id', 'specialty_ids', 'default_visit_reason_id',
    'visit_reason_ids',
  ];
  const providerRows = (doc.providers ?? []).map((p) => ({
      env,
      id: p.id,
      npi: p.npi,
      practice_id: p.practice_id,
      first_name: p.first_name,
      last_name: p.last_name,
      title: p.title ?? null,
      gender_identity: p.gender_identity ?? null,
      statement: p.statement ?? null,
      photo_url: p.photo_url ?? null,
      languages: p.languages ?? [],
      certifications: p.certifications ?? [],
      education_institutions: p.education_institutions ?? [],
      main_specialty_id: p.main_specialty_id ?? null,
      specialty_ids: p.specialty_ids ?? [],
      default_visit_reason_id: p.default_visit_reason_id ?? null,
      visit_reason_ids: p.visit_reason_ids ?? [],
    }));
  // interface.md §2.4 "profile updated": NPI, name, specialty, address or default visit reason.
  const providerProfile = ['npi', 'first_name', 'last_name', 'title', 'main_specialty_id', 'specialty_ids', 'default_visit_reason_id'];
  (await changedColumns(t, 'providers', env, providerRows, providerProfile)).forEach((id) => changedProviders.add(id));
  const providersWritten = await upsert(t, 'providers', providerRows, providerCols, { updated_at: now });
  if (renamedSpecialties.size) {
    const ids = [...renamedSpecialties];
    const holders = await trx
      .selectFrom('providers')
      .select('id')
      .where('env', '=', env)
      .where((eb) => eb.or([eb('main_specialty_id', 'in', ids), sql<boolean>`specialty_ids && ${sql.val(ids)}::text[]`]))
      .execute();
    holders.forEach((r) => changedProviders.add(r.id));
  }
  progress(doc.providers?.length ?? 0);

  const locCols = [
    'is_virtual', 'location_name', 'address1', 'address2', 'city', 'state', 'zip_code', 'latitude', 'longitude',
    'time_zone', 'phone_number', 'phone_extension',
  ];
  const locationRows = (doc.locations ?? []).map((l) => ({
      env,
      id: l.id,
      is_virtual: l.is_virtual ?? false,
      location_name: l.location_name ?? null,
      address1: l.address1 ?? null,
      address2: l.address2 ?? null,
      city: l.city ?? null,
      state: l.state,
      zip_code: l.zip_code ?? null,
      latitude: l.latitude ?? null,
      longitude: l.longitude ?? null,
      time_zone: l.time_zone,
      phone_number: l.phone_number ?? null,
      phone_extension: l.phone_extension ?? null,
    }));
  const locationProfile = ['is_virtual', 'location_name', 'address1', 'address2', 'city', 'state', 'zip_code', 'latitude', 'longitude', 'time_zone'];
  (await changedColumns(t, 'locations', env, locationRows, locationProfile)).forEach((id) => changedLocations.add(id));
  const locationsWritten = await upsert(t, 'locations', locationRows, locCols, { updated_at: now });
  progress(doc.locations?.length ?? 0);

  const plRows = (doc.provider_locations ?? []).map((pl) => ({
    env,
    id: providerLocationId(pl.provider_id, pl.location_id),
    provider_id: pl.provider_id,
    location_id: pl.location_id,
    provider_location_type: pl.provider_location_type ?? 'in_person_provider',
    visit_type: pl.visit_type ?? (pl.provider_location_type === 'virtual_provider' ? 'platform_video_service' : 'in_person'),
    confirmation_type: pl.confirmation_type ?? 'auto',
    required_fields: pl.required_fields ?? [],
    accepts_booking_requests_from: pl.accepts_booking_requests_from ?? ['in_network', 'out_of_network', 'self_pay'],
    is_provider_resource: pl.is_provider_resource ?? false,
    active: pl.active ?? true,
  }));
  const before = new Map<string, boolean>();
  for (const batch of chunks(plRows.map((r) => r.id))) {
    const rows = await trx
      .selectFrom('provider_locations')
      .select(['id', 'active'])
      .where('env', '=', env)
      .where('id', 'in', batch)
      .execute();
    rows.forEach((r) => before.set(r.id, r.active));
  }
  const pl = await upsert(t, 'provider_locations', plRows, [
    'provider_location_type', 'visit_type', 'confirmation_type', 'required_fields', 'accepts_booking_requests_from',
    'is_provider_resource', 'active',
  ]);
  const changes: { env: Env; provider_location_id: string; change: 'added' | 'removed' | 'profile_updated' }[] = [];
  const activeNow = new Map(plRows.map((r) => [r.id, r.active]));
  for (const id of [...pl.inserted, ...pl.updated]) {
    const wasActive = before.get(id);
    const isActive = activeNow.get(id)!;
    if (wasActive === undefined) {
      if (isActive) changes.push({ env, provider_location_id: id, change: 'added' });
    } else if (wasActive && !isActive) {
      changes.push({ env, provider_location_id: id, change: 'removed' });
    } else if (!wasActive && isActive) {
      changes.push({ env, provider_location_id: id, change: 'added' });
    }
    // Other settings of a provider-location (confirmation type, booking requirements, …) are not
    // its profile (interface.md §2.4): a changed provider or location below is.
  }
  // Activation time and deactivation time follow the `active` flag.
  const reactivated = changes.filter((c) => c.change === 'added' && before.has(c.provider_location_id));
  for (const batch of chunks(reactivated.map((c) => c.provider_location_id))) {
    await trx.updateTable('provider_locations').set({ go_live_at: now, deactivated_at: null })
      .where('env', '=', env).where('id', 'in', batch).execute();
  }
  for (const batch of chunks(changes.filter((c) => c.change === 'removed').map((c) => c.provider_location_id))) {
    await trx.updateTable('provider_locations').set({ deactivated_at: now }).where('env', '=', env).where('id', 'in', batch).execute();
  }
  // A changed provider or location profile updates every active provider-location that shows it.
  const alreadyNoted = new Set(changes.map((c) => c.provider_location_id));
  if (changedProviders.size || changedLocations.size) {
    const affected = await trx
      .selectFrom('provider_locations')
      .select('id')
      .where('env', '=', env)
      .where('active', '=', true)
      .where((eb) =>
        eb.or([
          ...(changedProviders.size ? [eb('provider_id', 'in', [...changedProviders])] : []),
          ...(changedLocations.size ? [eb('location_id', 'in', [...changedLocations])] : []),
        ]),
      )
      .execute();
    for (const { id } of affected) {
      if (!alreadyNoted.has(id)) changes.push({ env, provider_location_id: id, change: 'profile_updated' });
    }
  }
  const profileUpdated = changes.filter((c) => c.change === 'profile_updated').map((c) => c.provider_location_id);
  for (const batch of chunks(profileUpdated)) {
    await trx.updateTable('provider_locations').set({ profile_updated_at: now }).where('env', '=', env).where('id', 'in', batch).execute();
  }
  for (const batch of chunks(changes)) await trx.insertInto('directory_changes').values(batch).execute();

  progress(plRows.length);
  // Per provider-location: insurance plans and weekly schedules are replaced when given (set-based).
  const pls = doc.provider_locations ?? [];
  await replaceChildren(
    trx,
    'provider_location_insurance_plans',
    'provider_location_id',
    pls.filter((p) => p.insurance_plan_ids).map((p) => providerLocationId(p.provider_id, p.location_id)),
    pls.flatMap((p) =>
      (p.insurance_plan_ids ?? []).map((insurance_plan_id) => ({ env, provider_location_id: providerLocationId(p.provider_id, p.location_id), insurance_plan_id })),
    ),
    env,
  );
  await replaceChildren(
    trx,
    'weekly_schedules',
    'provider_location_id',
    pls.filter((p) => p.weekly_schedule).map((p) => providerLocationId(p.provider_id, p.location_id)),
    pls.flatMap((p) =>
      (p.weekly_schedule ?? []).map((b) => ({
        env,
        provider_location_id: providerLocationId(p.provider_id, p.location_id),
        weekday: b.weekday,
        start_local: b.start,
        end_local: b.end,
        visit_reason_ids: b.visit_reason_ids ?? null,
        patient_type: b.patient_type ?? null,
      })),
    ),
    env,
  );
  progress(plRows.length);

  await upsert(
    t,
    'facilities',
    (doc.facilities ?? []).map((f) => ({ env, id: f.id, name: f.name, npi: f.npi ?? null, building_type: f.building_type, provider_location_id: f.provider_location_id })),
    ['name', 'npi', 'building_type', 'provider_location_id'],
  );

  progress(doc.facilities?.length ?? 0);
  if (opts.developerId && plRows.length) {
    for (const batch of chunks(plRows)) {
      await trx
        .insertInto('developer_provider_locations')
        .values(batch.map((r) => ({ env, developer_id: opts.developerId!, provider_location_id: r.id })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  // The search rows of every provider-location whose own row, provider or location changed. A
  // provider or location inserted by this write has no provider-location but those it inserted.
  const searchStale = new Set([...pl.inserted, ...pl.updated]);
  for (const [column, ids] of [['provider_id', providersWritten.updated], ['location_id', locationsWritten.updated]] as const) {
    for (const batch of chunks(ids, SEARCH_BATCH)) {
      const { rows } = await sql<{ id: string }>`
        SELECT id FROM provider_locations WHERE env = ${env} AND ${sql.ref(column)} = ANY(${sql.val(batch)}::text[])`.execute(trx);
      rows.forEach((r) => searchStale.add(r.id));
    }
  }
  await refreshSearchRows(trx, env, [...searchStale]);

  return {
    practices: doc.practices?.length ?? 0,
    specialties: doc.specialties?.length ?? 0,
    visit_reasons: doc.visit_reasons?.length ?? 0,
    insurance_carriers: doc.insurance_carriers?.length ?? 0,
    insurance_plans: doc.insurance_plans?.length ?? 0,
    providers: doc.providers?.length ?? 0,
    locations: doc.locations?.length ?? 0,
    provider_locations: plRows.length,
    facilities: doc.facilities?.length ?? 0,
    added: changes.filter((c) => c.change === 'added').length,
    removed: changes.filter((c) => c.change === 'removed').length,
    profile_updated: profileUpdated.length,
  };
}
