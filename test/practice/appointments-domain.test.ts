/**
 * The practice's appointments, domain level on a real database (docs/decisions/0014-practice-workspace.md):
 * the calendar (DST week, open slots equal to /v1 availability), the detail view and its audit row,
 * each staff move through the shared domain steps with its outbox event, isolation and roles.
 */
import { sql } from 'kysely';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorTransition } from '../../src/domain/appointments/operator-transition.js';
import { DomainError } from '../../src/domain/errors.js';
import { staffCancel, staffConfirm, staffDecline, staffMarkStatus } from '../../src/domain/practices/appointments/actions.js';
import { practiceCalendar } from '../../src/domain/practices/appointments/calendar.js';
import { practiceAppointment } from '../../src/domain/practices/appointments/detail.js';
import { currentCursor, practiceEventsAfter } from '../../src/domain/practices/appointments/events-feed.js';
import { practiceAppointmentList } from '../../src/domain/practices/appointments/list.js';
import { staffMove } from '../../src/domain/practices/appointments/move.js';
import { PL } from '../appointments/fixtures.js';
import { engineName } from '../helpers/db.js';
import { bookAt, nyDate, OTHER_PL, practiceEnv, slots, staffOf, type PracticeEnv } from './appointment-fixtures.js';

const kindOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
    return 'ok';
  } catch (e) {
    if (e instanceof DomainError) return `${e.kind}: ${e.errors.map((x) => `${x.field ?? ''} ${x.message}`).join('; ')}`;
    throw e;
  }
};

describe(`practice appointments, domain (${engineName})`, () => {
  let e: PracticeEnv;
  const staff = staffOf('pt_t');
  const otherStaff = staffOf('pt_o');
  const providerUser = staffOf('pt_t', 'provider', 'pr_ny');
  beforeAll(async () => {
    e = await practiceEnv();
  });
  afterAll(async () => e?.close());

  const status = async (id: string) => (await e.t.db.selectFrom('appointments').select(['appointment_status', 'start_time']).where('id', '=', id).executeTakeFirstOrThrow());
  // A move made within the booking's millisecond shares its `occurred_at`: the creation sorts first then.
  const lastEvent = (id: string) =>
    e.t.db.selectFrom('outbox_events').selectAll().where('appointment_id', '=', id)
      .orderBy('occurred_at', 'desc').orderBy(sql`update_type = 'created'`).orderBy('id').executeTakeFirstOrThrow();
  const lastAudit = (id: string) => e.t.db.selectFrom('audit_log').selectAll().where('appointment_id', '=', id).orderBy('id', 'desc').executeTakeFirstOrThrow();
  const confirmed = async (pl: string, days: number, index: number) => {
    const b = await bookAt(e, pl, days, index);
    await operatorTransition(e.t.db, 'sandbox', b.id, { to: 'confirmed' });
    return b;
  };

  describe('calendar', () => {
    it('the DST week in New York: local days, appointments, and open slots exactly as /v1 availability offers them', async () => {
      const day = (await slots(e, PL.ny, { start: '2027-03-14', end: '2027-03-14' }));
      const res = await e.t.app.inject({
        method: 'POST', url: '/v1/appointments', headers: { authorization: `Bearer ${e.token}` },
        payload: { appointment_type: 'providers', data: { start_time: day[8]!.start_time, visit_reason_id: 'pc_t30', provider_location_id: PL.ny, patient_type: 'new', patient: { developer_patient_id: 'dp-x', first_name: 'Grace', last_name: 'Hopper', date_of_birth: '1906-12-09', sex_at_birth: 'female', phone_number: '2125550199', email_address: 'grace@example.org', patient_address: { address1: '1 Main St', city: 'New York', state: 'NY', zip_code: '10001' } } } },
      });
      expect(res.statusCode).toBe(200);
      const cal = await practiceCalendar(e.t.db, staff, { provider_id: 'pr_ny', provider_location_id: PL.ny, from: '2027-03-12', to: '2027-03-16' });
      expect(cal.provider_locations).toHaveLength(1);
      const pl = cal.provider_locations[0]!;
      expect(pl.time_zone).toBe('America/New_York');
      expect(pl.days.map((d) => d.date)).toEqual(['2027-03-12', '2027-03-13', '2027-03-14', '2027-03-15', '2027-03-16']);
      const dst = pl.days[2]!;
      // 01:30 is still EST, 03:00 is already EDT; 02:xx does not exist.
      expect(dst.open_slots.some((s) => s.start_time.startsWith('2027-03-14T01:30:00-05:00'))).toBe(true);
      expect(dst.open_slots.some((s) => s.start_time.startsWith('2027-03-14T03:00:00-04:00'))).toBe(true);
      expect(dst.open_slots.some((s) => s.start_time.startsWith('2027-03-14T02:'))).toBe(false);
      expect(dst.appointments).toHaveLength(1);
      expect(dst.appointments[0]).toMatchObject({ appointment_status: 'pending_booking', patient: { first_name: 'Grace', last_name: 'Hopper' }, booked_by: 'Booking app', visit_reason: { id: 'pc_t30', name: 'Thirty' } });
      expect(dst.appointments[0]!.start_time).toBe(day[8]!.start_time);
      for (const visitReasonId of ['pc_t30', 'pc_t60']) {
        for (const patientType of ['new', 'existing'] as const) {
          const v1 = await slots(e, PL.ny, { visitReasonId, patientType, start: '2027-03-12', end: '2027-03-16' });
          const ours = pl.days.flatMap((d) => d.open_slots.filter((s) => s.visit_reason_id === visitReasonId && s.patient_types.includes(patientType)).map((s) => s.start_time));
          expect(ours).toEqual(v1.map((s) => s.start_time));
          expect(v1.length).toBeGreaterThan(40);
        }
      }
      // The booked time is not open.
      expect(dst.open_slots.some((s) => s.start_time === day[8]!.start_time && s.visit_reason_id === 'pc_t30')).toBe(false);
    });

    it('without a provider-location: every one of the provider\'s in the practice', async () => {
      const cal = await practiceCalendar(e.t.db, staff, { provider_id: 'pr_ny', from: nyDate(3), to: nyDate(4) });
      expect(cal.provider_locations.map((p) => p.provider_location_id).sort()).toEqual([PL.ny, PL.nyElsewhere].sort());
    });

    it('another practice\'s provider or provider-location is not found; a provider user sees only their own; bad windows name the field', async () => {
      expect(await kindOf(practiceCalendar(e.t.db, staff, { provider_id: 'pr_o', from: nyDate(3), to: nyDate(4) }))).toMatch(/^not_found: provider_id/);
      expect(await kindOf(practiceCalendar(e.t.db, otherStaff, { provider_id: 'pr_ny', from: nyDate(3), to: nyDate(4) }))).toMatch(/^not_found/);
      expect(await kindOf(practiceCalendar(e.t.db, staff, { provider_id: 'pr_ny', provider_location_id: OTHER_PL, from: nyDate(3), to: nyDate(4) }))).toMatch(/^not_found: provider_location_id/);
      expect(await kindOf(practiceCalendar(e.t.db, providerUser, { provider_id: 'pr_ny2', from: nyDate(3), to: nyDate(4) }))).toMatch(/^not_found/);
      expect(await kindOf(practiceCalendar(e.t.db, providerUser, { provider_id: 'pr_ny', from: nyDate(3), to: nyDate(4) }))).toBe('ok');
      expect(await kindOf(practiceCalendar(e.t.db, staff, { provider_id: 'pr_ny', from: '2027-03-01', to: '2027-04-02' }))).toMatch(/^invalid: to must be at most 31/);
      expect(await kindOf(practiceCalendar(e.t.db, staff, { provider_id: 'pr_ny', from: '2027-3-01', to: '2027-02-01' }))).toMatch(/^invalid: from must be a date/);
    });
  });

  describe('detail and list', () => {
    it('staff see the patient\'s details and the history; the view is audited as staff; a provider user gets no contact details', async () => {
      const b = await bookAt(e, PL.manual, 6, 2);
      const view = await practiceAppointment(e.t.db, staff, b.id, { requestId: 'req-view-1' });
      expect(view).toMatchObject({
        appointment_id: b.id, appointment_status: 'pending_booking', confirmation_type: 'manual', visit_reason: { id: 'pc_t30', name: 'Thirty' },
        booked_by: { name: 'Booking app' },
        patient: { first_name: 'Ada', last_name: 'Lovelace', date_of_birth: '1990-05-17', sex_at_birth: 'female', phone_number: '2125550123', email_address: 'ada@example.org' },
      });
      expect(view.start_time).toBe(b.start);
      expect(view.history.map((h) => [h.action, h.actor_kind])).toEqual([['create', 'client']]);
      const a = await lastAudit(b.id);
      expect(a).toMatchObject({ action: 'staff:view', actor_kind: 'staff', actor_user_id: staff.userId, request_id: 'req-view-1', actor_client_id: null });
      const asProvider = await practiceAppointment(e.t.db, staffOf('pt_t', 'provider', 'pr_man'), b.id);
      expect(asProvider.patient).toEqual({ first_name: 'Ada', last_name: 'Lovelace' });
      expect(await kindOf(practiceAppointment(e.t.db, providerUser, b.id))).toMatch(/^not_found/);
      expect(await kindOf(practiceAppointment(e.t.db, otherStaff, b.id))).toMatch(/^not_found/);
      await staffConfirm(e.t.db, staff, b.id);
      const after = await practiceAppointment(e.t.db, staff, b.id);
      expect(after.history.map((h) => [h.action, h.actor_kind])).toEqual([['create', 'client'], ['staff:confirmed', 'staff']]);
    });

    it('the list holds the practice\'s appointments only, filtered and paged', async () => {
      const other = await bookAt(e, OTHER_PL, 7, 1);
      const mine = await bookAt(e, PL.ny2, 7, 1);
      const from = DateTime.fromISO(nyDate(7), { zone: 'America/New_York' }).toISO()!;
      const to = DateTime.fromISO(nyDate(8), { zone: 'America/New_York' }).toISO()!;
      const list = await practiceAppointmentList(e.t.db, staff, { page: 0, pageSize: 100, from, to });
      expect(list.items.map((i) => i.appointment_id)).toContain(mine.id);
      expect(list.items.map((i) => i.appointment_id)).not.toContain(other.id);
      const theirs = await practiceAppointmentList(e.t.db, otherStaff, { page: 0, pageSize: 100, from, to });
      expect(theirs.items.map((i) => i.appointment_id)).toEqual([other.id]);
      const byProvider = await practiceAppointmentList(e.t.db, staff, { page: 0, pageSize: 1, provider_id: 'pr_ny2', status: 'pending_booking' });
      expect(byProvider.items).toHaveLength(1);
      expect(byProvider.totalCount).toBeGreaterThanOrEqual(1);
      expect(await kindOf(practiceAppointmentList(e.t.db, staff, { page: 0, pageSize: 10, status: 'done', from: 'yesterday' }))).toMatch(/^invalid: from .*; status unknown status done/);
    });
  });

  describe('moves', () => {
    it('confirm: a manual pending booking; the event is the one /v1 confirm writes, delivered; audit names the staff member', async () => {
      const b = await bookAt(e, PL.manual, 9, 1);
      expect(await staffConfirm(e.t.db, staff, b.id, { requestId: 'r-confirm' })).toEqual({ appointment_id: b.id, appointment_status: 'confirmed' });
      expect((await status(b.id)).appointment_status).toBe('confirmed');
      const ev = await lastEvent(b.id);
      expect(ev).toMatchObject({ update_type: 'updated', status: 'pending', changed_attributes: [{ attribute_path: 'appointment.status' }] });
      expect(await lastAudit(b.id)).toMatchObject({ actor_kind: 'staff', actor_user_id: staff.userId, action: 'staff:confirmed', request_id: 'r-confirm' });
      expect(await kindOf(staffConfirm(e.t.db, staff, b.id))).toBe('conflict: appointment_status appointment cannot be confirmed: current status is confirmed');
      const auto = await bookAt(e, PL.ny, 9, 1);
      expect(await kindOf(staffConfirm(e.t.db, staff, auto.id))).toMatch(/^conflict: appointment_status .*confirmed automatically.*current status is pending_booking/);
    });

    it('decline: pending_booking becomes booking_failed and its time is free again', async () => {
      const b = await bookAt(e, PL.manual, 9, 3);
      expect(await staffDecline(e.t.db, staff, b.id)).toEqual({ appointment_id: b.id, appointment_status: 'booking_failed' });
      expect(await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', b.id).execute()).toEqual([]);
      expect((await lastEvent(b.id)).changed_attributes).toEqual([{ attribute_path: 'appointment.status' }]);
      expect(await kindOf(staffDecline(e.t.db, staff, b.id))).toBe('conflict: appointment_status appointment cannot be declined: current status is booking_failed');
    });

    it('cancel: provider reasons only, free text only with other_provider_reason; a cancelled event', async () => {
      const b = await confirmed(PL.ny, 10, 2);
      expect(await kindOf(staffCancel(e.t.db, staff, b.id, { cancellation_reason_type: 'patient_no_longer_available' }))).toMatch(/^invalid: cancellation_reason_type must be one of: provider_not_available/);
      expect(await kindOf(staffCancel(e.t.db, staff, b.id, { cancellation_reason_type: 'provider_not_available', cancellation_reason: 'sick' }))).toMatch(/^invalid: cancellation_reason is allowed only/);
      expect(await kindOf(staffCancel(e.t.db, staff, b.id, { cancellation_reason_type: 'other_provider_reason', cancellation_reason: 'x'.repeat(51) }))).toMatch(/^invalid: cancellation_reason must be text of at most 50/);
      expect(await staffCancel(e.t.db, staff, b.id, { cancellation_reason_type: 'other_provider_reason', cancellation_reason: 'Clinic flooded' })).toEqual({ appointment_id: b.id, appointment_status: 'cancelled' });
      const row = await e.t.db.selectFrom('appointments').select(['cancellation_reason_type', 'cancellation_reason']).where('id', '=', b.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ cancellation_reason_type: 'other_provider_reason', cancellation_reason: 'Clinic flooded' });
      expect(await lastEvent(b.id)).toMatchObject({ update_type: 'cancelled', status: 'pending', changed_attributes: [{ attribute_path: 'appointment.status' }] });
      expect(await lastAudit(b.id)).toMatchObject({ actor_kind: 'staff', action: 'cancel' });
      expect(await kindOf(staffCancel(e.t.db, staff, b.id, { cancellation_reason_type: 'provider_not_available' }))).toBe('conflict: appointment_status appointment cannot be cancelled: current status is cancelled');
    });

    it('move: to an offered free start, settled at once (rescheduled, the old time released); taken, not offered and unconfirmed are refused', async () => {
      const b = await confirmed(PL.ny, 11, 2);
      const day = await slots(e, PL.ny, { start: nyDate(11), end: nyDate(11) });
      const target = day.find((s) => s.start_time > b.start && s.start_time !== b.start)!.start_time;
      const taken = await bookAt(e, PL.ny, 11, 6);
      expect(await kindOf(staffMove(e.t.db, staff, b.id, { start_time: taken.start }))).toBe('conflict: start_time this start time is no longer available: another appointment holds it');
      expect(await kindOf(staffMove(e.t.db, staff, b.id, { start_time: `${nyDate(11)}T07:00:00-05:00` }))).toMatch(/^invalid: start_time is not a start time the availability endpoint offers/);
      expect(await kindOf(staffMove(e.t.db, staff, b.id, { start_time: 'tomorrow' }))).toMatch(/^invalid: start_time must be an ISO-8601/);
      // A provider-location that stopped taking bookings refuses the move (read under the lock), nothing moved.
      await e.t.db.updateTable('provider_locations').set({ active: false }).where('id', '=', PL.ny).execute();
      try {
        expect(await kindOf(staffMove(e.t.db, staff, b.id, { start_time: target }))).toBe('invalid: start_time the provider location no longer takes bookings');
      } finally {
        await e.t.db.updateTable('provider_locations').set({ active: true }).where('id', '=', PL.ny).execute();
      }
      expect((await status(b.id)).appointment_status).toBe('confirmed');
      const moved = await staffMove(e.t.db, staff, b.id, { start_time: target });
      expect(moved).toMatchObject({ appointment_id: b.id, appointment_status: 'rescheduled' });
      const row = await status(b.id);
      expect(row.start_time.getTime()).toBe(Date.parse(target));
      const holds = await e.t.db.selectFrom('appointment_holds').select('kind').where('appointment_id', '=', b.id).execute();
      expect(holds).toEqual([{ kind: 'current' }]);
      expect(await lastEvent(b.id)).toMatchObject({ update_type: 'updated', status: 'pending', changed_attributes: [{ attribute_path: 'appointment.status' }, { attribute_path: 'appointment.start_time' }] });
      // The old time is bookable again.
      expect((await slots(e, PL.ny, { start: nyDate(11), end: nyDate(11) })).map((s) => s.start_time)).toContain(b.start);
      expect(await kindOf(staffMove(e.t.db, staff, taken.id, { start_time: b.start }))).toBe('conflict: appointment_status appointment cannot be moved: current status is pending_booking; confirm or decline it first');
    });

    it('arrived and no_show: the update-status rules and events', async () => {
      const b = await confirmed(PL.ny2, 12, 2);
      expect(await staffMarkStatus(e.t.db, staff, b.id, 'arrived')).toEqual({ appointment_id: b.id, appointment_status: 'confirmed' });
      expect((await lastEvent(b.id)).changed_attributes).toEqual([{ attribute_path: 'appointment.arrived' }]);
      expect(await kindOf(staffMarkStatus(e.t.db, staff, b.id, 'no_show'))).toBe('conflict: appointment_status no_show can be recorded only after the start time; current status is confirmed');
      const later = new Date(Date.parse(b.start) + 3_600_000);
      expect(await staffMarkStatus(e.t.db, staff, b.id, 'no_show', { now: later })).toEqual({ appointment_id: b.id, appointment_status: 'no_show' });
      expect(await lastAudit(b.id)).toMatchObject({ actor_kind: 'staff', action: 'no_show' });
    });

    it('another practice\'s appointment is not found for every move; a provider user may not act (forbidden), whatever the appointment', async () => {
      const b = await bookAt(e, PL.manual, 13, 1);
      const moves = (s: typeof staff) => [
        () => staffConfirm(e.t.db, s, b.id), () => staffDecline(e.t.db, s, b.id), () => staffCancel(e.t.db, s, b.id, { cancellation_reason_type: 'provider_not_available' }),
        () => staffMove(e.t.db, s, b.id, { start_time: b.start }), () => staffMarkStatus(e.t.db, s, b.id, 'arrived'), () => staffMarkStatus(e.t.db, s, b.id, 'no_show'),
      ];
      for (const p of moves(otherStaff)) expect(await kindOf(p())).toMatch(/^not_found: appointment_id/);
      for (const p of moves(staffOf('pt_t', 'provider', 'pr_man'))) expect(await kindOf(p())).toMatch(/^forbidden/);
      const readOnly = { ...staff, scopes: new Set(['practice.read']) };
      for (const p of moves(readOnly)) expect(await kindOf(p())).toMatch(/^forbidden/);
      expect((await status(b.id)).appointment_status).toBe('pending_booking');
    });
  });

  describe('events feed', () => {
    it('carries the practice\'s outbox events after a cursor, in order, no other practice\'s, no patient data', async () => {
      const start = await currentCursor(e.t.db);
      await new Promise((r) => setTimeout(r, 5));
      const mine = await bookAt(e, PL.manual, 14, 1);
      const theirs = await bookAt(e, OTHER_PL, 14, 1);
      await staffConfirm(e.t.db, staff, mine.id);
      // An event is read once its transaction is behind the commit horizon (other sessions may hold it back briefly).
      const until = async (s: typeof staff, id: string, n: number) => {
        for (let i = 0; ; i++) {
          const r = await practiceEventsAfter(e.t.db, s, start);
          if (r.events.filter((x) => x.appointment_id === id).length >= n || i > 30) return r;
          await new Promise((res) => setTimeout(res, 100));
        }
      };
      const read = await until(staff, mine.id, 2);
      // The start cursor may lie a little before now (the commit horizon): earlier events of this practice may come too.
      const practices = async (ids: string[]) =>
        [...new Set((await e.t.db.selectFrom('appointments').select('practice_id').where('id', 'in', ids).execute()).map((r) => r.practice_id))];
      expect(await practices(read.events.map((x) => x.appointment_id))).toEqual(['pt_t']);
      read.events = read.events.filter((x) => x.appointment_id === mine.id);
      expect(read.events.map((x) => [x.appointment_id, x.update_type])).toEqual([[mine.id, 'created'], [mine.id, 'updated']]);
      expect(Object.keys(read.events[0]!).sort()).toEqual(['appointment_id', 'changed_attributes', 'id', 'occurred_at', 'update_type']);
      const other = await until(otherStaff, theirs.id, 1);
      expect(other.events.map((x) => x.appointment_id)).toContain(theirs.id);
      expect(await practices(other.events.map((x) => x.appointment_id))).toEqual(['pt_o']);
      // Resuming after the first event gives the second; after the last, nothing.
      const { parseCursor } = await import('../../src/domain/practices/appointments/events-feed.js');
      expect((await practiceEventsAfter(e.t.db, staff, parseCursor(read.events[0]!.id))).events.map((x) => x.id)).toEqual([read.events[1]!.id]);
      expect((await practiceEventsAfter(e.t.db, staff, read.cursor)).events).toEqual([]);
      expect((await practiceEventsAfter(e.t.db, staffOf('pt_t', 'provider', 'pr_ny'), start)).events.filter((x) => x.appointment_id === mine.id)).toEqual([]);
    });
  });
});
