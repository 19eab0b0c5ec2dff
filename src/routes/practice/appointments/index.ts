/**
 * The Practice API's appointments (docs/decisions/0014-practice-workspace.md, "Appointments,
 * calendar and live events"): the calendar, the list, one appointment with its patient, the moves
 * (confirm, decline, cancel, move, arrived, no-show) and the live events stream. Registered inside
 * the `/practice/v1` scope, whose practice guard sets `req.staff`; each route then checks its scope
 * (`practice.read` or `practice.write`) before the body is read. Thin handlers: the practice comes
 * from the caller, never from input; the domain (src/domain/practices/appointments) scopes, checks
 * and writes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { staffCancel, staffCancelErrors, staffConfirm, staffDecline, staffMarkStatus } from '../../../domain/practices/appointments/actions.js';
import { calendarQueryErrors, practiceCalendar } from '../../../domain/practices/appointments/calendar.js';
import { practiceAppointment } from '../../../domain/practices/appointments/detail.js';
import { practiceAppointmentList, practiceListErrors } from '../../../domain/practices/appointments/list.js';
import { staffMove } from '../../../domain/practices/appointments/move.js';
import { requirePracticeScope, type PracticeScope, type StaffPrincipal } from '../../../domain/practices/staff-principal.js';
import { LocalClock } from '../../../domain/scheduling/local-time.js';
import { staffOf } from '../../../http/practice-request.js';
import { ChangeSignal } from '../../../lib/change-signal.js';
import { errorResponses, nextUrl, pageEnvelope } from '../../v1/common-schemas.js';
import type { PracticeRouteDeps } from '../deps.js';
import { practiceSecurity } from '../security.js';
import { closeStreamsOnClose, EventStreams } from './events.js';
import { AppointmentParams, CalendarQuery, CalendarResponse, CancelBody, DetailResponse, ListItem, ListQuery, MoveBody, MoveResponse } from './schemas.js';

const tags = ['practice'];

/** The `onRequest` hook of a route needing `scope`: runs after the scope's practice guard, before the body is read. */
const needs = (scope: PracticeScope) => async (req: FastifyRequest) => requirePracticeScope(staffOf(req), scope);
/** A route's guard hook and its OpenAPI security requirement, for `scope`. */
const scoped = (scope: PracticeScope) => ({ onRequest: needs(scope), security: practiceSecurity(scope) });

export const practiceAppointmentRoutes: FastifyPluginAsyncTypebox<PracticeRouteDeps> = async (app, { config, db, appointmentChanges, eventPollMs }) => {
  const clock = new LocalClock();
  const streams = new EventStreams();
  closeStreamsOnClose(app, streams);
  // Every appointment write of this application (the practice's moves here, `/v1`'s) wakes the streams.
  const changes = appointmentChanges ?? new ChangeSignal();
  const unsubscribe = changes.subscribe(() => streams.kick());
  app.addHook('onClose', async () => unsubscribe());
  const read = scoped('practice.read');
  const write = scoped('practice.write');

  app.get(
    '/calendar',
    {
      onRequest: read.onRequest,
      config: { alsoCheck: (req) => calendarQueryErrors(req.query as Record<string, unknown>) },
      schema: {
        tags,
        security: read.security,
        summary: 'A provider\'s calendar: appointments and open slots per local day',
        description: 'Per provider-location of the provider in your practice (or the one named), per local day in the location\'s zone: the appointments and the open slots, exactly the start times the availability endpoint offers, with the patient types each is open to. At most 31 days.',
        querystring: CalendarQuery,
        response: { 200: CalendarResponse, ...errorResponses(400, 404) },
      },
    },
    async (req) => ({ request_id: String(req.id), data: await practiceCalendar(db, staffOf(req), req.query, { clock }) }),
  );

  app.get(
    '/appointments',
    {
      onRequest: read.onRequest,
      config: { alsoCheck: (req) => practiceListErrors(req.query as Record<string, unknown>) },
      schema: {
        tags,
        security: read.security,
        summary: 'List your practice\'s appointments',
        description: 'Sorted by start time, filtered by start time window, status and provider; at most 1,000 reachable through pagination. A provider user sees only their own.',
        querystring: ListQuery,
        response: { 200: pageEnvelope(Type.Array(ListItem)), ...errorResponses(400) },
      },
    },
    async (req) => {
      const q = req.query;
      const { items, totalCount } = await practiceAppointmentList(db, staffOf(req), { ...q, pageSize: q.page_size }, { clock });
      return {
        request_id: String(req.id),
        page: q.page,
        page_size: q.page_size,
        total_count: totalCount,
        next_url: q.page >= 10 ? null : nextUrl(config.publicBaseUrl, req, q.page, q.page_size, Math.min(totalCount, 1000)),
        data: items,
      };
    },
  );

  app.get(
    '/appointments/:appointment_id',
    {
      onRequest: read.onRequest,
      schema: {
        tags,
        security: read.security,
        summary: 'One appointment with its patient and history',
        description: 'The appointment, its visit reason, the booking developer, the patient (contact details for practice staff, the name alone for a provider user) and its changes. Every view is recorded in the audit log.',
        params: AppointmentParams,
        response: { 200: DetailResponse, ...errorResponses(404) },
      },
    },
    async (req) => ({ request_id: String(req.id), data: await practiceAppointment(db, staffOf(req), req.params.appointment_id, { requestId: String(req.id), clock }) }),
  );

  const moved = <T>(data: T, reqId: string) => {
    changes.notify();
    return { request_id: reqId, data };
  };
  const simple = [
    ['confirm', 'Confirm a booking waiting for the provider', 'A manual-confirmation booking in pending_booking becomes confirmed; the booking developer gets the webhook.', (id: string, s: StaffPrincipal, r: string) => staffConfirm(db, s, id, { requestId: r })],
    ['decline', 'Decline a booking the provider cannot take', 'pending_booking becomes booking_failed and the time is released; the booking developer gets the webhook.', (id: string, s: StaffPrincipal, r: string) => staffDecline(db, s, id, { requestId: r })],
    ['arrived', 'Record that the patient arrived', 'Allowed in any status, which it does not change; the booking developer gets the webhook.', (id: string, s: StaffPrincipal, r: string) => staffMarkStatus(db, s, id, 'arrived', { requestId: r })],
    ['no_show', 'Record that the patient did not come', 'Only from the start time until two days after it; the booking developer gets the webhook.', (id: string, s: StaffPrincipal, r: string) => staffMarkStatus(db, s, id, 'no_show', { requestId: r })],
  ] as const;
  for (const [name, summary, description, run] of simple) {
    app.post(
      `/appointments/:appointment_id/${name}`,
      {
        onRequest: write.onRequest,
        schema: { tags, summary, security: write.security, description, params: AppointmentParams, response: { 200: MoveResponse, ...(name === 'arrived' ? errorResponses(404) : errorResponses(404, 409)) } },
      },
      async (req) => moved(await run(req.params.appointment_id, staffOf(req), String(req.id)), String(req.id)),
    );
  }

  app.post(
    '/appointments/:appointment_id/cancel',
    {
      onRequest: write.onRequest,
      config: { alsoCheck: (req) => staffCancelErrors(req.body) },
      schema: {
        tags,
        security: write.security,
        summary: 'Cancel for the provider',
        description: 'With a provider reason type; free text only with other_provider_reason. The time is released; the booking developer gets the webhook.',
        params: AppointmentParams,
        body: CancelBody,
        response: { 200: MoveResponse, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => moved(await staffCancel(db, staffOf(req), req.params.appointment_id, req.body, { requestId: String(req.id) }), String(req.id)),
  );

  app.post(
    '/appointments/:appointment_id/move',
    {
      onRequest: write.onRequest,
      schema: {
        tags,
        security: write.security,
        summary: 'Move an appointment to another start time',
        description: 'To a start the availability endpoint offers for it and nobody holds; settled at once (rescheduled). From confirmed, pending_reschedule or rescheduled. The booking developer gets the webhook.',
        params: AppointmentParams,
        body: MoveBody,
        response: { 200: MoveResponse, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => {
      const r = await staffMove(db, staffOf(req), req.params.appointment_id, req.body, { requestId: String(req.id), clock });
      return moved({ appointment_id: r.appointment_id, appointment_status: r.appointment_status }, String(req.id));
    },
  );

  app.get(
    '/events',
    {
      onRequest: read.onRequest,
      schema: {
        tags,
        security: read.security,
        summary: 'Live events of your practice\'s appointments (text/event-stream)',
        description: 'Server-sent events from the outbox: id (a cursor; send it back as Last-Event-ID to resume), event (the update type) and data {appointment_id, update_type, changed_attributes, occurred_at}. No patient data. A comment every 15 s keeps the connection open.',
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 100 })) }),
        produces: ['text/event-stream'],
        response: { 200: Type.String({ description: 'A text/event-stream' }), ...errorResponses(400) },
      },
    },
    async (req, reply) => {
      streams.serve(db, req, reply, { pollMs: eventPollMs ?? 500 });
      return reply;
    },
  );
};
