/**
 * Real races (issue #8 §5): parallel HTTP requests against a listening server. Exactly one wins a
 * contested time, the rest get a clear 409, never a 500, and two live appointments never overlap;
 * bookings that do not contend all succeed.
 */
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { engineName } from '../helpers/db.js';
import { fetchReportingStalls } from '../helpers/stall-report.js';
import { createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from './fixtures.js';

const N = 24;

describe(`races over HTTP (${engineName})`, () => {
  let e: SchedulingEnv;
  let base: string;
  // A request answers in well under a second here; one that does not fails with what the server and
  // the database were doing then (test/helpers/stall-report.ts), not with the test's timeout.
  let watched: ReturnType<typeof fetchReportingStalls>;
  beforeAll(async () => {
    e = await schedulingEnv();
    base = await e.t.listen();
    watched = fetchReportingStalls(e.t.app.server as Server);
  });
  afterAll(async () => e.close());

  const send = async (method: string, path: string, body: unknown) => {
    const res = await watched(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${e.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { data?: { appointment_id: string }; errors?: { message: string }[] } };
  };
  const count = (rs: { status: number }[]) => rs.reduce<Record<number, number>>((m, r) => ({ ...m, [r.status]: (m[r.status] ?? 0) + 1 }), {});

  async function noOverlaps(): Promise<void> {
    const { rows } = await sql<{ n: string }>`
      SELECT count(*) AS n FROM appointment_holds a JOIN appointment_holds b
        ON a.env = b.env AND a.provider_id = b.provider_id AND a.appointment_id <> b.appointment_id AND a.during && b.during`.execute(e.t.db);
    expect(Number(rows[0]!.n)).toBe(0);
    const live = await sql<{ n: string }>`
      SELECT count(*) AS n FROM appointments a JOIN appointments b
        ON a.provider_id = b.provider_id AND a.id < b.id
       AND tstzrange(a.start_time, a.end_time) && tstzrange(b.start_time, b.end_time)
      WHERE a.appointment_status NOT IN ('cancelled', 'booking_failed') AND b.appointment_status NOT IN ('cancelled', 'booking_failed')`.execute(e.t.db);
    expect(Number(live.rows[0]!.n)).toBe(0);
  }

  it(`${N} clients booking the same slot: one 200, the rest 409`, async () => {
    const slot = (await slots(e, PL.ny, { start: nyDate(8), end: nyDate(8) }))[4]!.start_time;
    const results = await Promise.all(Array.from({ length: N }, () => send('POST', '/v1/appointments', createBody(PL.ny, slot))));
    expect(count(results)).toEqual({ 200: 1, 409: N - 1 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.errors?.[0]?.message).toMatch(/no longer available/);
    await noOverlaps();
  });

  it('overlapping visits of different lengths on the same provider: one wins', async () => {
    const day = await slots(e, PL.ny, { start: nyDate(9), end: nyDate(9) });
    const at = day[6]!.start_time;
    const later = DateTime.fromISO(at, { setZone: true }).plus({ minutes: 30 }).toISO({ suppressMilliseconds: true })!;
    const results = await Promise.all([
      ...Array.from({ length: N / 2 }, () => send('POST', '/v1/appointments', createBody(PL.ny, at, { visit_reason_id: 'pc_t60' }))),
      ...Array.from({ length: N / 2 }, () => send('POST', '/v1/appointments', createBody(PL.nyElsewhere, later))),
    ]);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(N - 1);
    await noOverlaps();
  });

  it('bookings that do not contend all succeed: different providers at the same instant, and distinct slots', async () => {
    // 15:00Z is 10:00 in New York (EST), 08:00 in Phoenix and 05:00 in Honolulu: all offered.
    const instant = DateTime.fromISO(`${nyDate(10)}T10:00:00`, { zone: 'America/New_York' });
    const at = (pl: string, zone: string) => createBody(pl, instant.setZone(zone).toISO({ suppressMilliseconds: true })!);
    const sameInstant = [
      at(PL.ny, 'America/New_York'), at(PL.ny2, 'America/New_York'), at(PL.manual, 'America/New_York'),
      at(PL.phx, 'America/Phoenix'), at(PL.hnl, 'Pacific/Honolulu'),
    ];
    const distinct = (await slots(e, PL.ny2, { start: nyDate(11), end: nyDate(11) })).slice(0, N - sameInstant.length).map((s) => createBody(PL.ny2, s.start_time));
    const results = await Promise.all([...sameInstant, ...distinct].map((b) => send('POST', '/v1/appointments', b)));
    expect(count(results)).toEqual({ 200: N });
    await noOverlaps();
  });

  it(`${N} appointments rescheduling into the same time: one 200, the rest 409`, async () => {
    const day = await slots(e, PL.phx, { start: nyDate(12), end: nyDate(12) });
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      const r = await send('POST', '/v1/appointments', createBody(PL.phx, day[i]!.start_time));
      expect(r.status).toBe(200);
      ids.push(r.body.data!.appointment_id);
    }
    const target = day[N + 2]!.start_time;
    const results = await Promise.all([
      ...ids.map((id) => send('POST', '/v1/appointments/reschedule', { appointment_id: id, start_time: target })),
      // A new booking races for the same time too.
      send('POST', '/v1/appointments', createBody(PL.phx, target)),
    ]);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(N);
    await noOverlaps();
  });

  it(`${N} clients confirming the same appointment: one 200, the rest 409 naming confirmed`, async () => {
    const slot = (await slots(e, PL.manual, { start: nyDate(13), end: nyDate(13) }))[0]!.start_time;
    const id = (await send('POST', '/v1/appointments', createBody(PL.manual, slot))).body.data!.appointment_id;
    const results = await Promise.all(Array.from({ length: N }, () => send('POST', '/v1/appointments/confirm', { appointment_id: id })));
    expect(count(results)).toEqual({ 200: 1, 409: N - 1 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.errors?.[0]?.message).toContain('confirmed');
  });

  it('cancel and confirm racing on one appointment end in one consistent state', async () => {
    const slot = (await slots(e, PL.manual, { start: nyDate(13), end: nyDate(13) }))[0]!.start_time;
    const id = (await send('POST', '/v1/appointments', createBody(PL.manual, slot))).body.data!.appointment_id;
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => send('POST', i % 2 ? '/v1/appointments/confirm' : '/v1/appointments/cancel', { appointment_id: id })),
    );
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    expect(results.filter((r) => r.status === 200).length).toBeLessThanOrEqual(2);
    await noOverlaps();
  });
});
