/**
 * Practice schedules (docs/scheduling.md): time off and weekly hours change `/v1` availability and
 * booking at once, in the location's zone (daylight-saving days included); settings; isolation
 * between practices. Domain functions against a real database; availability and bookings over `/v1`
 * with a developer's token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { getSchedule } from '../../src/domain/practices/schedule/view.js';
import { addTimeOff, listTimeOff, removeTimeOff } from '../../src/domain/practices/schedule/time-off.js';
import { replaceWeeklyHours } from '../../src/domain/practices/schedule/weekly-hours.js';
import { updateProviderLocationSettings } from '../../src/domain/practices/schedule/settings.js';
import { engineName } from '../helpers/db.js';
import { bearer } from '../helpers/auth.js';
import { book, nyDate, PL, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { hhmm, OTHER_PL, practiceScheduleEnv, staff } from './schedule-fixtures.js';

const kindOf = async (p: Promise<unknown>): Promise<string> => p.then(() => 'ok', (e: unknown) => (e instanceof DomainError ? e.kind : String(e)));

describe(`practice schedules: time off and weekly hours (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await practiceScheduleEnv();
  });
  afterAll(async () => e.close());
  const day = (pl: string, date: string) => slots(e, pl, { start: date, end: date });

  it('a full day off for a provider empties every location that day at once; removing it frees the slots', async () => {
    const d = nyDate(6);
    const before = await day(PL.ny, d);
    expect(before.length).toBeGreaterThan(20);
    const saved = await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', start_date: d, end_date: d, note: 'conference' });
    expect(saved.saved).toBe(true);
    expect(saved.result).toMatchObject({ provider_id: 'pr_ny', provider_location_id: null, start_date: d, end_date: d, start_local: null, note: 'conference', created_by_user_id: 'us_staff' });
    expect(await day(PL.ny, d)).toEqual([]);
    expect(await day(PL.nyElsewhere, d)).toEqual([]);
    expect(await day(PL.ny2, d)).toHaveLength(before.length); // another provider of the practice
    expect(hhmm(await day(PL.ny, nyDate(7)))).toEqual(hhmm(before)); // the next day is open
    expect((await listTimeOff(e.t.db, staff(), { providerId: 'pr_ny', from: d, to: d })).map((t) => t.time_off_id)).toEqual([saved.result.time_off_id]);
    await removeTimeOff(e.t.db, staff(), saved.result.time_off_id);
    expect(hhmm(await day(PL.ny, d))).toEqual(hhmm(before));
    expect(await kindOf(removeTimeOff(e.t.db, staff(), saved.result.time_off_id))).toBe('not_found');
  });

  it('a partial day at one provider-location closes only that location, only those hours', async () => {
    const d = nyDate(7);
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', provider_location_id: PL.ny, start_date: d, end_date: d, start_local: '09:00', end_local: '12:00' });
    const open = hhmm(await day(PL.ny, d));
    expect(open).toContain('08:30'); // ends at 09:00
    expect(open).toContain('12:00');
    for (const t of ['09:00', '09:30', '10:00', '11:30']) expect(open).not.toContain(t);
    const sixty = hhmm(await slots(e, PL.ny, { start: d, end: d, visitReasonId: 'pc_t60' }));
    expect(sixty).not.toContain('08:30'); // 08:30–09:30 overlaps
    expect(sixty).toContain('08:00');
    expect(hhmm(await day(PL.nyElsewhere, d))).toContain('10:00');
  });

  it('a range from a time on its first day to a time on its last closes everything in between', async () => {
    const [d1, d2, d3] = [nyDate(8), nyDate(9), nyDate(10)];
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny2', start_date: d1, end_date: d3, start_local: '16:00', end_local: '10:00' });
    const first = hhmm(await day(PL.ny2, d1));
    expect(first.at(-1)).toBe('15:30');
    expect(first).toContain('00:00');
    expect(await day(PL.ny2, d2)).toEqual([]);
    expect(hhmm(await day(PL.ny2, d3))[0]).toBe('10:00');
  });

  it('daylight saving (New York, 2027-03-14): time off is read in local time on the 23-hour day', async () => {
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', provider_location_id: PL.nyElsewhere, start_date: '2027-03-14', end_date: '2027-03-14', start_local: '00:30', end_local: '04:00' });
    const sunday = (await day(PL.nyElsewhere, '2027-03-14')).map((s) => s.start_time);
    expect(sunday.filter((s) => s < '2027-03-14T07')).toEqual([
      '2027-03-14T00:00:00-05:00', '2027-03-14T04:00:00-04:00', '2027-03-14T04:30:00-04:00', '2027-03-14T05:00:00-04:00', '2027-03-14T05:30:00-04:00',
    ]);
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', provider_location_id: PL.nyElsewhere, start_date: '2027-03-15', end_date: '2027-03-15' });
    expect(await day(PL.nyElsewhere, '2027-03-15')).toEqual([]);
    const monday16 = (await day(PL.nyElsewhere, '2027-03-16')).map((s) => s.start_time);
    expect(monday16[0]).toBe('2027-03-16T00:00:00-04:00'); // the day after is whole again
    expect((await day(PL.nyElsewhere, '2027-03-13')).at(-1)!.start_time).toBe('2027-03-13T17:30:00-05:00');
  });

  it('a booking into time off is refused exactly like one outside hours, also with a kept booking context', async () => {
    const d = nyDate(12);
    const open = await day(PL.manual, d);
    expect((await book(e, PL.manual, open[0]!.start_time)).statusCode).toBe(200); // keeps this day's context
    const outside = await book(e, PL.manual, `${d}T07:00:00${open[0]!.start_time.slice(19)}`);
    expect(outside.statusCode).toBe(400);
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_man', start_date: d, end_date: d, start_local: '12:00', end_local: '18:00' });
    const into = await book(e, PL.manual, open.find((s) => s.start_time.includes('T13:00'))!.start_time);
    expect(into.statusCode).toBe(400);
    expect(into.json().errors).toEqual(outside.json().errors);
    expect((await book(e, PL.manual, open.find((s) => s.start_time.includes('T11:00'))!.start_time)).statusCode).toBe(200);
  });

  it('a reschedule into time off is refused like one outside hours', async () => {
    const [d, off] = [nyDate(13), nyDate(14)];
    const res = await book(e, PL.phx, (await slots(e, PL.phx, { start: d, end: d }))[20]!.start_time);
    expect(res.statusCode).toBe(200);
    const target = (await slots(e, PL.phx, { start: off, end: off }))[20]!.start_time;
    await addTimeOff(e.t.db, staff(), { provider_id: 'pr_phx', start_date: off, end_date: off });
    const moved = await e.t.app.inject({ method: 'POST', url: '/v1/appointments/reschedule', headers: bearer(e.token),
      payload: { appointment_id: res.json().data.appointment_id, start_time: target } });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().errors[0].field).toBe('start_time');
  });

  it('weekly hours replace the schedule at once: blocked and freed times show in availability and booking', async () => {
    const d = nyDate(15);
    const offset = (await day(PL.hnl, d))[0]!.start_time.slice(19);
    expect((await book(e, PL.hnl, `${d}T07:00:00${offset}`)).statusCode).toBe(400); // outside hours (and warms the context)
    const weekday = new Date(`${d}T12:00:00Z`).getUTCDay() || 7;
    const saved = await replaceWeeklyHours(e.t.db, staff(), PL.hnl, [{ weekday, start: '07:00', end: '08:00' }, { weekday, start: '10:00', end: '11:00', patient_type: 'existing' }]);
    expect(saved.saved).toBe(true);
    expect(hhmm(await day(PL.hnl, d))).toEqual(['07:00', '07:30']);
    expect(hhmm(await slots(e, PL.hnl, { start: d, end: d, patientType: 'existing' }))).toEqual(['07:00', '07:20', '07:40', '10:00', '10:20', '10:40']);
    expect(await day(PL.hnl, nyDate(16))).toEqual([]);
    expect((await book(e, PL.hnl, `${d}T07:00:00${offset}`)).statusCode).toBe(200);
    const schedule = await getSchedule(e.t.db, staff(), PL.hnl);
    expect(schedule.weekly_hours).toEqual([{ weekday, start: '07:00', end: '08:00' }, { weekday, start: '10:00', end: '11:00', patient_type: 'existing' }]);
    const bad = await replaceWeeklyHours(e.t.db, staff(), PL.hnl, [{ weekday: 1, start: '09:00', end: '08:00', visit_reason_ids: ['pc_nope'] }]).catch((x: DomainError) => x);
    expect((bad as DomainError).errors.map((x) => x.field)).toEqual(['hours[0].end', 'hours[0].visit_reason_ids[0]']);
  });

  it('the schedule view and settings: confirmation, requirements, payers and plans, checked like an import', async () => {
    const before = await getSchedule(e.t.db, staff(), PL.ny);
    expect(before).toMatchObject({ provider_id: 'pr_ny', time_zone: 'America/New_York', confirmation_type: 'auto', insurance_plan_ids: ['ip_t'] });
    expect(before.visit_reasons).toEqual([
      { visit_reason_id: 'pc_t30', name: 'Thirty', offered: true, duration_minutes: { new: 30, existing: 20 }, directory_duration_minutes: { new: 30, existing: 20 }, overridden: false },
      { visit_reason_id: 'pc_t60', name: 'Sixty', offered: true, duration_minutes: { new: 60, existing: 40 }, directory_duration_minutes: { new: 60, existing: 40 }, overridden: false },
    ]);
    expect(before.time_off.map((t) => t.provider_location_id)).toEqual([PL.ny]); // its own; not lo_ny_b's
    await updateProviderLocationSettings(e.t.db, staff(), PL.ny2, { confirmation_type: 'manual', required_fields: ['patient.insurance'], insurance_plan_ids: ['ip_u'] });
    const after = await getSchedule(e.t.db, staff(), PL.ny2);
    expect(after).toMatchObject({ confirmation_type: 'manual', required_fields: ['patient.insurance'], insurance_plan_ids: ['ip_u'] });
    const d = nyDate(17);
    const res = await book(e, PL.ny2, (await day(PL.ny2, d))[30]!.start_time);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].field).toBe('data.patient.insurance');
    const bad = await updateProviderLocationSettings(e.t.db, staff(), PL.ny2, { insurance_plan_ids: ['ip_u', 'ip_nope'] }).catch((x: DomainError) => x);
    expect((bad as DomainError).errors).toEqual([{ field: 'insurance_plan_ids[1]', message: 'unknown insurance plan ip_nope' }]);
  });

  it("another practice's provider, provider-location or time off is not found; a provider user reaches only their own", async () => {
    const other = staff({ practiceId: 'pt_o' });
    const d = nyDate(20);
    expect(await kindOf(addTimeOff(e.t.db, other, { provider_id: 'pr_ny', start_date: d, end_date: d }))).toBe('not_found');
    expect(await kindOf(addTimeOff(e.t.db, staff(), { provider_id: 'pr_o', start_date: d, end_date: d }))).toBe('not_found');
    expect(await kindOf(addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', provider_location_id: PL.ny2, start_date: d, end_date: d }))).toBe('not_found');
    expect(await kindOf(replaceWeeklyHours(e.t.db, staff(), OTHER_PL, []))).toBe('not_found');
    expect(await kindOf(getSchedule(e.t.db, staff(), OTHER_PL))).toBe('not_found');
    expect(await kindOf(getSchedule(e.t.db, staff(), 'pr_nope|lo_ny'))).toBe('not_found');
    expect(await kindOf(updateProviderLocationSettings(e.t.db, staff(), OTHER_PL, { confirmation_type: 'manual' }))).toBe('not_found');
    const mine = await addTimeOff(e.t.db, other, { provider_id: 'pr_o', start_date: d, end_date: d });
    expect(await kindOf(removeTimeOff(e.t.db, staff(), mine.result.time_off_id))).toBe('not_found');
    expect((await listTimeOff(e.t.db, staff(), {})).some((t) => t.provider_id === 'pr_o')).toBe(false);
    expect(await kindOf(listTimeOff(e.t.db, staff(), { providerId: 'pr_o' }))).toBe('not_found');
    const provider = staff({ role: 'provider', providerId: 'pr_ny' });
    expect(await kindOf(getSchedule(e.t.db, provider, PL.ny))).toBe('ok');
    expect(await kindOf(getSchedule(e.t.db, provider, PL.ny2))).toBe('not_found');
    expect((await listTimeOff(e.t.db, provider, {})).every((t) => t.provider_id === 'pr_ny')).toBe(true);
  });

  it('bad time off names every field', async () => {
    const err = await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', start_date: '2027-02-30', end_date: nyDate(3), start_local: '25:00' }).catch((x: DomainError) => x);
    expect((err as DomainError).errors.map((x) => x.field)).toEqual(['start_date', 'start_local']);
    const order = await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', start_date: nyDate(4), end_date: nyDate(3) }).catch((x: DomainError) => x);
    expect((order as DomainError).errors.map((x) => x.field)).toEqual(['end_date']);
    const same = await addTimeOff(e.t.db, staff(), { provider_id: 'pr_ny', start_date: nyDate(4), end_date: nyDate(4), start_local: '10:00', end_local: '09:00' }).catch((x: DomainError) => x);
    expect((same as DomainError).errors.map((x) => x.field)).toEqual(['end_local']);
  });
});
