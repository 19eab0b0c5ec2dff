/**
 * Availability across daylight-saving changes (docs/api/availability.md#where-bookable-times-come-from): America/New_York spring-forward and
 * fall-back days, America/Phoenix and Pacific/Honolulu (no DST). Computed by `computeAvailability`
 * with an injected `now`, so the transition days are always in the future.
 */
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeAvailability } from '../../src/domain/availability/slot-lists.js';
import { engineName } from '../helpers/db.js';
import { PL, schedulingEnv, type SchedulingEnv } from '../appointments/fixtures.js';

describe(`availability across daylight-saving changes (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const day = async (pl: string, date: string, now: string, patientType: 'new' | 'existing' = 'new') => {
    const r = await computeAvailability(e.t.db, {
      env: 'sandbox', providerLocationIds: [pl], visitReasonId: 'pc_t30', patientType, from: date, to: date, now: new Date(now),
    });
    return r.get(pl)!.slots;
  };
  // Weekly blocks are 00:00–06:00 and 08:00–18:00 local, every day.

  it('New York spring forward (2027-03-14): 02:00–03:00 does not exist, offsets move from -05:00 to -04:00', async () => {
    const slots = await day(PL.ny, '2027-03-14', '2027-03-01T00:00:00Z');
    const night = slots.map((s) => s.startTime).filter((s) => s < '2027-03-14T07');
    expect(night).toEqual([
      '2027-03-14T00:00:00-05:00', '2027-03-14T00:30:00-05:00', '2027-03-14T01:00:00-05:00', '2027-03-14T01:30:00-05:00',
      '2027-03-14T03:00:00-04:00', '2027-03-14T03:30:00-04:00', '2027-03-14T04:00:00-04:00', '2027-03-14T04:30:00-04:00',
      '2027-03-14T05:00:00-04:00', '2027-03-14T05:30:00-04:00',
    ]);
    expect(slots.some((s) => s.startTime.includes('T02:'))).toBe(false);
    // The working day is unaffected: 08:00–18:00 EDT, 20 half-hour slots.
    expect(slots.filter((s) => s.startTime >= '2027-03-14T08')).toHaveLength(20);
    expect(slots.find((s) => s.startTime === '2027-03-14T08:00:00-04:00')!.startMs).toBe(Date.parse('2027-03-14T12:00:00Z'));
    // Every slot's instant agrees with its printed offset.
    for (const s of slots) expect(DateTime.fromISO(s.startTime).toMillis()).toBe(s.startMs);
  });

  it('New York fall back (2026-11-01): 01:00 and 01:30 happen twice, once per offset, and never overlap', async () => {
    const slots = await day(PL.ny, '2026-11-01', '2026-10-20T00:00:00Z');
    const night = slots.filter((s) => s.startMs < Date.parse('2026-11-01T12:00:00Z')).map((s) => s.startTime);
    expect(night).toEqual([
      '2026-11-01T00:00:00-04:00', '2026-11-01T00:30:00-04:00', '2026-11-01T01:00:00-04:00', '2026-11-01T01:30:00-04:00',
      '2026-11-01T01:00:00-05:00', '2026-11-01T01:30:00-05:00', '2026-11-01T02:00:00-05:00', '2026-11-01T02:30:00-05:00',
      '2026-11-01T03:00:00-05:00', '2026-11-01T03:30:00-05:00', '2026-11-01T04:00:00-05:00', '2026-11-01T04:30:00-05:00',
      '2026-11-01T05:00:00-05:00', '2026-11-01T05:30:00-05:00',
    ]);
    const starts = slots.map((s) => s.startMs);
    expect(new Set(starts).size).toBe(starts.length);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(30 * 60_000);
  });

  it('a visit reason of another length (existing patients, 20 min) steps in real time across the change', async () => {
    const slots = await day(PL.ny, '2027-03-14', '2027-03-01T00:00:00Z', 'existing');
    const night = slots.filter((s) => s.startMs < Date.parse('2027-03-14T11:00:00Z'));
    // 00:00–06:00 local is 5 real hours that day: 15 slots of 20 minutes.
    expect(night).toHaveLength(15);
    expect(night.every((s) => s.durationMinutes === 20)).toBe(true);
  });

  it('America/Phoenix keeps -07:00 while New York changes', async () => {
    for (const [date, now] of [['2027-03-14', '2027-03-01T00:00:00Z'], ['2026-11-01', '2026-10-20T00:00:00Z']] as const) {
      const slots = await day(PL.phx, date, now);
      expect(slots).toHaveLength(32);
      expect(slots.every((s) => s.startTime.endsWith('-07:00'))).toBe(true);
      expect(slots[0]!.startTime).toBe(`${date}T00:00:00-07:00`);
    }
  });

  it('Pacific/Honolulu keeps -10:00', async () => {
    const slots = await day(PL.hnl, '2027-03-14', '2027-03-01T00:00:00Z');
    expect(slots).toHaveLength(32);
    expect(slots.every((s) => s.startTime.endsWith('-10:00'))).toBe(true);
    expect(slots.at(-1)!.startTime).toBe('2027-03-14T17:30:00-10:00');
  });

  it('the HTTP endpoint answers the spring-forward day in the provider offset', async () => {
    const { bearer } = await import('../helpers/auth.js');
    const res = await e.t.app.inject({
      url: `/v1/provider_locations/availability?provider_location_ids=${encodeURIComponent(PL.ny)}&visit_reason_id=pc_t30&patient_type=new&start_date_in_provider_local_time=2027-03-14&end_date_in_provider_local_time=2027-03-14`,
      headers: bearer(e.token),
    });
    expect(res.statusCode, res.body).toBe(200);
    const times = res.json().data[0].timeslots.map((s: { start_time: string }) => s.start_time);
    expect(times).toContain('2027-03-14T01:30:00-05:00');
    expect(times).toContain('2027-03-14T03:00:00-04:00');
    expect(times.some((t: string) => t.includes('T02:'))).toBe(false);
  });
});
