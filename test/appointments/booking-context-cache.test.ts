/**
 * Booking contexts kept in memory (src/domain/appointments/booking-context-cache.ts) and the
 * versions that make them safe (migration 0010): a kept context never lets a booking through after
 * the directory or the provider's calendar changed, in this process or another, and never refuses
 * what a fresh context accepts.
 */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookingStatement, createAppointment, type CreateInput } from '../../src/domain/appointments/create.js';
import { DomainError } from '../../src/domain/errors.js';
import { httpErrorOf } from '../../src/http/domain-error-mapping.js';
import { loadBookingContext, type BookingContext } from '../../src/domain/appointments/booking-context.js';
import { BookingContextCache } from '../../src/domain/appointments/booking-context-cache.js';
import type { PatientInput } from '../../src/domain/appointments/patient-rules.js';
import { buildApp } from '../../src/http/app.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { createBody, nyDate, patient, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

describe(`kept booking contexts (${engineName})`, () => {
  let e: SchedulingEnv;
  /** A second application on the same database: another process with its own kept contexts. */
  let other: FastifyInstance;
  const date = nyDate(10);
  beforeAll(async () => {
    e = await schedulingEnv();
    // Only pushed calendar slots make pr_phx bookable.
    await e.t.db.deleteFrom('weekly_schedules').where('provider_location_id', '=', PL.phx).execute();
    other = await buildApp({ config: e.t.config, db: e.t.db });
  });
  afterAll(async () => {
    await other.close();
    await e.close();
  });

  const put = (app: FastifyInstance, times: string[]) =>
    app.inject({
      method: 'PUT',
      url: `/v1/providers/pr_phx/calendar/timeslots?date=${date}`,
      headers: bearer(e.token),
      payload: { timeslots: times.map((t) => ({ provider_id: 'pr_phx', location_id: 'lo_phx', start_time: `${date}T${t}`, time_zone: 'America/Phoenix' })) },
    });
  const bookPhx = (time: string) =>
    e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload: createBody(PL.phx, `${date}T${time}:00-07:00`) });
  const directoryVersion = async () => (await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(e.t.db)).rows[0]!.v;
  const calendarVersion = async (provider: string) =>
    (await sql<{ v: string }>`SELECT coalesce((SELECT version::text FROM calendar_versions WHERE env = 'sandbox' AND provider_id = ${provider}), '0') AS v`.execute(e.t.db)).rows[0]!.v;

  it('a calendar changed by another process: the kept context no longer books a removed slot', async () => {
    expect((await put(e.t.app, ['09:00', '09:30', '10:00'])).statusCode).toBe(200);
    const first = await bookPhx('09:00');
    expect(first.statusCode, first.body).toBe(200); // this process now keeps pr_phx's context for the day
    // The other process replaces the day: 09:30 is gone.
    expect((await put(other, ['10:00'])).statusCode).toBe(200);
    const removed = await bookPhx('09:30');
    expect(removed.statusCode, removed.body).toBe(400);
    expect(removed.json().errors[0].field).toBe('data.start_time');
    expect((await bookPhx('10:00')).statusCode).toBe(200);
  });

  it('a kept context that refuses is asked again: a slot added since is booked', async () => {
    expect((await put(other, ['10:00', '11:00'])).statusCode).toBe(200);
    const added = await bookPhx('11:00');
    expect(added.statusCode, added.body).toBe(200);
  });

  it('a directory change (the provider-location deactivated) reaches a kept context', async () => {
    const day = await slots(e, PL.ny, { start: nyDate(11), end: nyDate(11) });
    const ny = (i: number) =>
      e.t.app.inject({ method: 'POST', url: '/v1/appointments', headers: bearer(e.token), payload: createBody(PL.ny, day[i]!.start_time) });
    expect((await ny(0)).statusCode).toBe(200);
    await e.t.db.updateTable('provider_locations').set({ active: false }).where('env', '=', 'sandbox').where('id', '=', PL.ny).execute();
    const inactive = await ny(2);
    expect(inactive.statusCode, inactive.body).toBe(400);
    expect(inactive.json().errors[0].field).toBe('data.provider_location_id');
    await e.t.db.updateTable('provider_locations').set({ active: true }).where('env', '=', 'sandbox').where('id', '=', PL.ny).execute();
    expect((await ny(2)).statusCode).toBe(200);
  });

  it('the booking statement inserts nothing when a version moved, and everything when they hold', async () => {
    const principal = { kind: 'client' as const, env: 'sandbox' as const, developerId: e.dev.developer_id, clientId: e.dev.client_id, scopes: new Set<never>() };
    const day = await slots(e, PL.ny2, { start: nyDate(12), end: nyDate(12) });
    const start = new Date(day[0]!.start_time);
    const ctx = await loadBookingContext(e.t.db, principal, { providerLocationId: PL.ny2, visitReasonId: 'pc_t30', day: Math.floor(start.getTime() / 86_400_000) });
    const count = async () =>
      (await sql<{ n: string }>`SELECT ((SELECT count(*) FROM patients) + (SELECT count(*) FROM appointments) + (SELECT count(*) FROM appointment_holds)
        + (SELECT count(*) FROM outbox_events) + (SELECT count(*) FROM audit_log))::text AS n`.execute(e.t.db)).rows[0]!.n;
    const write = (versions: { directory: string; calendar: string }) =>
      e.t.db.executeQuery<{ j: unknown[] }>(bookingStatement(new Map(), {
        principal, pl: ctx.pl!, patient: patient() as PatientInput, visitReasonId: 'pc_t30', patientType: 'new',
        start, end: new Date(start.getTime() + 30 * 60_000), now: new Date(), versions,
      }));
    const before = await count();
    for (const stale of [
      { ...ctx.versions, directory: String(BigInt(ctx.versions.directory) - 1n) },
      { ...ctx.versions, calendar: String(BigInt(ctx.versions.calendar) + 1n) },
    ]) {
      expect((await write(stale)).rows).toEqual([]);
      expect(await count()).toBe(before);
    }
    const ok = await write(ctx.versions);
    expect(ok.rows).toHaveLength(1);
    expect(Number(await count())).toBe(Number(before) + 5);
  });

  it('a schedule that changes under every attempt: five attempts, then 503 with Retry-After, nothing written', async () => {
    const principal = { kind: 'client' as const, env: 'sandbox' as const, developerId: e.dev.developer_id, clientId: e.dev.client_id, scopes: new Set<never>() };
    const day = await slots(e, PL.ny2, { start: nyDate(13), end: nyDate(13) });
    let writes = 0;
    // The database as the booking sees it: before each guarded write, another writer moves the directory version.
    const racing = new Proxy(e.t.db, {
      get(target, prop) {
        if (prop !== 'executeQuery') {
          const v: unknown = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        }
        return async (q: { sql: string }) => {
          if (q.sql.includes('"_guard"')) {
            writes++;
            await sql`UPDATE directory_version SET version = version + 1`.execute(target);
          }
          return target.executeQuery(q as never);
        };
      },
    });
    const before = await e.t.db.selectFrom('appointments').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    const err = await createAppointment(racing, principal, createBody(PL.ny2, day[0]!.start_time) as CreateInput, { contexts: new BookingContextCache() }).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe('unavailable');
    expect(httpErrorOf(err as DomainError)).toEqual({ status: 503, errorType: 'api_error', headers: { 'retry-after': '1' } });
    expect(writes).toBe(5);
    const after = await e.t.db.selectFrom('appointments').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
    // Without the interference the same booking goes through.
    expect((await createAppointment(e.t.db, principal, createBody(PL.ny2, day[0]!.start_time) as CreateInput)).appointment_status).toBe('pending_booking');
  });

  it('triggers move the versions: per provider and statement for calendars, once per transaction for the directory', async () => {
    const dir0 = await directoryVersion();
    const phx0 = await calendarVersion('pr_phx');
    const ny0 = await calendarVersion('pr_ny');
    // A calendar statement moves only the providers whose rows it touched.
    await e.t.db.updateTable('calendar_timeslots').set({ patient_type: 'new' }).where('provider_id', '=', 'pr_phx').execute();
    expect(BigInt(await calendarVersion('pr_phx'))).toBe(BigInt(phx0) + 1n);
    expect(await calendarVersion('pr_ny')).toBe(ny0);
    expect(await directoryVersion()).toBe(dir0);
    await e.t.db.deleteFrom('calendar_timeslots').where('provider_id', '=', 'pr_phx').where(sql<boolean>`start_local::text LIKE '%11:00%'`).execute();
    expect(BigInt(await calendarVersion('pr_phx'))).toBe(BigInt(phx0) + 2n);
    // Directory statements move the directory version, whatever wrote them.
    await e.t.db.updateTable('providers').set({ first_name: 'Renamed' }).where('id', '=', 'pr_hnl').execute();
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 1n);
    await e.t.db.updateTable('visit_reasons').set({ duration_new_minutes: 30 }).where('id', '=', 'pc_t30').execute();
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 2n);
    // Once per transaction, however many statements (an import runs thousands).
    await e.t.db.transaction().execute(async (trx) => {
      for (const name of ['A', 'B', 'C']) await trx.updateTable('providers').set({ first_name: name }).where('id', '=', 'pr_hnl').execute();
    });
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 3n);
    // A provider-location joining a developer's directory only widens it: no move. Leaving it moves.
    await e.t.db.insertInto('developer_provider_locations').values({ env: 'sandbox', developer_id: e.other.developer_id, provider_location_id: PL.hnl }).execute();
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 3n);
    await e.t.db.deleteFrom('developer_provider_locations').where('developer_id', '=', e.other.developer_id).where('provider_location_id', '=', PL.hnl).execute();
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 4n);
    // TRUNCATE of the calendar moves the directory version (every kept context is read again).
    await sql`TRUNCATE calendar_timeslots`.execute(e.t.db);
    expect(BigInt(await directoryVersion())).toBe(BigInt(dir0) + 5n);
  });
});

describe('BookingContextCache bound', () => {
  it('keeps at most its bound, dropping the oldest first; setting a key again makes it the newest', () => {
    const cache = new BookingContextCache(2);
    const ctx = (n: number) => ({ versions: { directory: String(n), calendar: '0' } }) as unknown as BookingContext;
    cache.set('a', ctx(1));
    cache.set('b', ctx(2));
    cache.set('a', ctx(3)); // 'a' is now newer than 'b'
    cache.set('c', ctx(4));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.versions.directory).toBe('3');
    expect(cache.get('c')?.versions.directory).toBe('4');
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });
});
