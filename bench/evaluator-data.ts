/**
 * Data for the evaluator benchmark (bench/evaluator.ts): a generated directory, free slots at one
 * provider-location of each of `places` providers (auto confirmation, each with its provider's
 * default visit reason), and `seedDue(n)`, which books `n` due appointments spread round-robin over
 * them with the service's own booking statement, in a mix whose outcomes are known in advance:
 *
 * | i mod 10 | what is due | the evaluator must make it |
 * |---|---|---|
 * | 0 | a new booking one minute off a slot start (not offered) | `booking_failed` |
 * | 1 | a confirmed booking's reschedule to a free slot | `rescheduled` |
 * | 2 | a confirmed booking's reschedule one minute off a slot start | `reschedule_failed` |
 * | 3–9 | a new booking at a free slot | `confirmed` |
 *
 * Each booking k of a provider-location uses its free slots 4k (the booking) and 4k + 2 (the
 * reschedule), so the one-minute shifts overlap only slots no booking uses. `clear()` deletes
 * everything booked, so every run starts from the same tables.
 */
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../src/db/database.js';
import { bookingStatement } from '../src/domain/appointments/create.js';
import { computeAvailability } from '../src/domain/availability/slot-lists.js';
import { createDeveloper } from '../src/domain/developers/create-developer.js';
import { generateDirectory } from '../src/domain/directory/seed.js';
import { analyzeDirectory } from '../src/domain/directory/write/analyze.js';
import { writeDirectory } from '../src/domain/directory/write/write-directory.js';
import { loadProviderLocations, type ProviderLocationContext } from '../src/domain/scheduling/schedule-data.js';

export type Expected = Record<'confirmed' | 'booking_failed' | 'rescheduled' | 'reschedule_failed', number>;

export interface BenchData {
  places: number;
  /** Books `n` due appointments (see the module comment); returns the outcomes they must get. */
  seedDue(n: number): Promise<Expected>;
  /** The statuses of the bench's appointments, and the evaluator's events and audit rows. */
  outcome(): Promise<{ statuses: Record<string, number>; dueLeft: number; serviceEvents: number; serviceAudits: number }>;
  /** Deletes every appointment, patient, event and audit row of the bench, then vacuums those tables. */
  clear(): Promise<void>;
}

const MINUTE = 60_000;
const DAY = 86_400_000;

export async function prepareBenchData(db: Db, opts: { providers: number; places: number }): Promise<BenchData> {
  const dev = await createDeveloper(db, { env: 'sandbox', name: 'evaluator bench' });
  await db.transaction().execute((trx) => writeDirectory(trx, 'sandbox', generateDirectory(opts.providers, 2020), { developerId: dev.developer_id }));
  await analyzeDirectory(db);
  const rows = await sql<{ id: string; provider_id: string; reason: string }>`
    SELECT DISTINCT ON (pl.provider_id) pl.id, pl.provider_id, p.default_visit_reason_id AS reason
    FROM provider_locations pl JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
    WHERE pl.env = 'sandbox' AND pl.active AND pl.confirmation_type = 'auto' AND p.default_visit_reason_id IS NOT NULL
    ORDER BY pl.provider_id, pl.id`.execute(db);
  const chosen = rows.rows.slice(0, opts.places);
  const contexts = await loadProviderLocations(db, 'sandbox', chosen.map((r) => r.id));
  const slots = new Map<string, { start: Date; end: Date }[]>();
  for (const reason of new Set(chosen.map((r) => r.reason))) {
    const ids = chosen.filter((r) => r.reason === reason).map((r) => r.id);
    const today = new Date();
    const free = await computeAvailability(db, {
      env: 'sandbox', providerLocationIds: ids, visitReasonId: reason, patientType: 'new',
      from: new Date(today.getTime() + 2 * DAY).toISOString().slice(0, 10), to: new Date(today.getTime() + 40 * DAY).toISOString().slice(0, 10),
    });
    for (const [id, a] of free) slots.set(id, a.slots.map((s) => ({ start: new Date(s.startMs), end: new Date(s.startMs + s.durationMinutes * MINUTE) })));
  }
  const places = chosen.filter((r) => (slots.get(r.id)?.length ?? 0) >= 24);
  const principal = { kind: 'client' as const, env: 'sandbox' as const, developerId: dev.developer_id, clientId: dev.client_id, scopes: new Set<string>() };
  const patient = {
    first_name: 'Bench', last_name: 'Patient', date_of_birth: '1980-01-01', sex_at_birth: 'female' as const, phone_number: '2125550123',
    email_address: 'bench@example.org', patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' },
  };
  const texts = new Map<string, string>();

  return {
    places: places.length,
    async seedDue(n) {
      const versions = {
        directory: (await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(db)).rows[0]!.v,
        calendars: new Map((await sql<{ p: string; v: string }>`SELECT provider_id AS p, version::text AS v FROM calendar_versions WHERE env = 'sandbox'`.execute(db)).rows.map((r) => [r.p, r.v])),
      };
      const expected: Expected = { confirmed: 0, booking_failed: 0, rescheduled: 0, reschedule_failed: 0 };
      const moves: { id: string; start: Date; end: Date; providerId: string }[] = [];
      const now = new Date();
      for (let i = 0; i < n; i++) {
        const place = places[i % places.length]!;
        const k = Math.floor(i / places.length);
        const free = slots.get(place.id)!;
        const at = free[4 * k];
        const to = free[4 * k + 2];
        if (!at || !to) throw new Error(`not enough free slots at ${place.id} for ${n} bookings`);
        const pl = contexts.get(place.id) as ProviderLocationContext;
        const kind = i % 10;
        const shift = kind === 0 ? MINUTE : 0;
        const { rows: r } = await db.executeQuery<{ j: [string] }>(bookingStatement(texts, {
          principal, pl, patient, visitReasonId: place.reason, patientType: 'new',
          start: new Date(at.start.getTime() + shift), end: new Date(at.end.getTime() + shift), now,
          versions: { directory: versions.directory, calendar: versions.calendars.get(pl.providerId) ?? '0' },
        }));
        const id = r[0]!.j[0];
        if (kind === 0) expected.booking_failed++;
        else if (kind === 1 || kind === 2) {
          const off = kind === 2 ? MINUTE : 0;
          moves.push({ id, start: new Date(to.start.getTime() + off), end: new Date(to.end.getTime() + off), providerId: pl.providerId });
          if (kind === 1) expected.rescheduled++;
          else expected.reschedule_failed++;
        } else expected.confirmed++;
      }
      if (moves.length) {
        // As a reschedule of a confirmed booking leaves it (src/domain/appointments/reschedule.ts): both times held, due now.
        const ids = moves.map((m) => m.id);
        const starts = moves.map((m) => m.start.toISOString());
        const ends = moves.map((m) => m.end.toISOString());
        await sql`
          WITH m AS (SELECT * FROM unnest(${ids}::text[], ${starts}::timestamptz[], ${ends}::timestamptz[]) AS m(id, s, e))
          UPDATE appointments a SET appointment_status = 'pending_reschedule', confirmation_type = 'auto',
                 pending_start_time = m.s, pending_end_time = m.e, evaluate_after = ${now}
          FROM m WHERE a.id = m.id`.execute(db);
        await sql`
          INSERT INTO appointment_holds (appointment_id, kind, env, provider_id, during)
          SELECT m.id, 'pending', 'sandbox', a.provider_id, tstzrange(m.s, m.e)
          FROM unnest(${ids}::text[], ${starts}::timestamptz[], ${ends}::timestamptz[]) AS m(id, s, e) JOIN appointments a ON a.id = m.id`.execute(db);
      }
      return expected;
    },
    async outcome() {
      const statuses = Object.fromEntries(
        (await sql<{ s: string; n: number }>`SELECT appointment_status AS s, count(*)::int AS n FROM appointments WHERE developer_id = ${dev.developer_id} GROUP BY 1`.execute(db)).rows.map((r) => [r.s, r.n]),
      );
      const one = async (q: RawBuilder<{ n: number }>) => (await q.execute(db)).rows[0]!.n;
      return {
        statuses,
        dueLeft: await one(sql<{ n: number }>`SELECT count(*)::int AS n FROM appointments WHERE developer_id = ${dev.developer_id} AND evaluate_after IS NOT NULL`),
        serviceEvents: await one(sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_events WHERE developer_id = ${dev.developer_id} AND status = 'pending'`),
        serviceAudits: await one(sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_log WHERE developer_id = ${dev.developer_id} AND actor_kind = 'service'`),
      };
    },
    async clear() {
      await sql`DELETE FROM appointments WHERE developer_id = ${dev.developer_id}`.execute(db);
      await sql`DELETE FROM patients WHERE developer_id = ${dev.developer_id}`.execute(db);
      await sql`DELETE FROM outbox_events WHERE developer_id = ${dev.developer_id}`.execute(db);
      await sql`DELETE FROM audit_log WHERE developer_id = ${dev.developer_id}`.execute(db);
      await sql`VACUUM ANALYZE appointments, appointment_holds, patients, outbox_events, audit_log`.execute(db);
    },
  };
}

