/**
 * Appointment operations (docs/api/appointments.md, docs/api/README.md#operations; docs/api/auth.md#scopes). Thin handlers:
 * parse, call `src/domain/appointments/`, shape the answer.
 */
import { serviceRequestId } from '../../../http/request-id.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import type { AppointmentStatus } from '../../../db/schema.js';
import { cancelAppointment, cancellationReasonErrors } from '../../../domain/appointments/cancel.js';
import { confirmAppointment } from '../../../domain/appointments/confirm.js';
import { BookingContextCache } from '../../../domain/appointments/booking-context-cache.js';
import { bookingProblems } from '../../../domain/appointments/booking-checks.js';
import { createAppointment } from '../../../domain/appointments/create.js';
import { AuditBuffer } from '../../../domain/appointments/audit-buffer.js';
import { audit } from '../../../domain/appointments/events.js';
import { LIST_CAP, listAppointments, type ListFilter } from '../../../domain/appointments/list.js';
import { appointmentParticipants } from '../../../domain/appointments/participants.js';
import { createFields, fullRecord, VisibleRecordReader } from '../../../domain/appointments/record.js';
import { rescheduleAppointment, rescheduleProblems } from '../../../domain/appointments/reschedule.js';
import type { BookingOutcomePolicy } from '../../../domain/appointments/outcome-policy.js';
import { APPOINTMENT_STATUSES } from '../../../domain/appointments/states.js';
import { updateAppointmentStatus } from '../../../domain/appointments/update-status.js';
import { LocalClock, parseUtcTimestamp } from '../../../domain/scheduling/local-time.js';
import { principalOf } from '../../../http/auth-guard.js';
import { loggableError } from '../../../lib/loggable-error.js';
import { invalidInput, notFound } from '../../../domain/errors.js';
import { commaList, errorResponses, nextUrl, pageEnvelope } from '../common-schemas.js';
import {
  AppointmentRecord, CancelBody, ConfirmBody, CreateBody, CreateFields, envelope, IdParams, ListQuery, ParticipantsData, RescheduleBody,
  StatusFields, UpdateStatusBody,
} from './schemas.js';

export interface AppointmentRouteDeps {
  config: Config;
  db: Db;
  /** Outcomes forced on bookings and reschedules (the sandbox fixtures'); none when absent. */
  outcomes?: BookingOutcomePolicy;
  /**
   * Called once a write of this area (book, confirm, cancel, reschedule, update status) has been
   * answered with success, so this process's readers of the outbox (the practice's live events,
   * docs/decisions/0014-practice-workspace.md, "Live calendar") look at once.
   */
  onAppointmentChange?: () => void;
}

const tags = ['appointments'];
const rid = (req: FastifyRequest) => ({ requestId: serviceRequestId(req) });

function timestamp(field: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = parseUtcTimestamp(value);
  if (!d) throw invalidInput(field, 'must be an ISO-8601 UTC timestamp');
  return d.toJSDate();
}

export const appointmentRoutes: FastifyPluginAsyncTypebox<AppointmentRouteDeps> = async (app, { config, db, outcomes, onAppointmentChange }) => {
  const read = app.guard({ scope: 'external.appointment.read' });
  const write = app.guard({ scope: 'external.appointment.write' });
  const base = config.publicBaseUrl;
  // Memoises start-time formatting in the provider's offset across requests (bounded).
  const clock = new LocalClock(50_000);
  // Read audit records are batched (one INSERT per 50 ms), flushed when the app closes.
  const auditReads = new AuditBuffer(db, { onError: (err) => app.log.error({ err: loggableError(err) }, 'read audit flush failed') });
  app.addHook('onClose', async () => auditReads.close());
  // GET /v1/appointments/{id}: the visible-record query compiled once per principal kind.
  const records = new VisibleRecordReader(db);
  // The booking statement's SQL text, built once per shape (src/db/fast/insert-sql.ts).
  const statementTexts = new Map<string, string>();
  // Booking contexts kept between bookings, checked by version in the booking's write (migration 0010).
  const contexts = new BookingContextCache();
  // After the answer, so after the commit: a successful write of this area wakes the change's readers.
  if (onAppointmentChange) {
    app.addHook('onResponse', (req, reply, done) => {
      if (req.method !== 'GET' && reply.statusCode < 300) onAppointmentChange();
      done();
    });
  }

  app.post(
    '/v1/appointments',
    {
      onRequest: write,
      config: { alsoCheck: (req) => bookingProblems(db, principalOf(req), req.body) },
      schema: {
        tags,
        summary: 'Book an appointment at a start time the availability endpoint offers',
        body: CreateBody,
        response: { 200: envelope(CreateFields), ...errorResponses(400, 409, 503) },
      },
    },
    async (req, reply) => {
      const row = await createAppointment(db, principalOf(req), req.body, { ...rid(req), clock, statementTexts, contexts, ...(outcomes ? { outcomes } : {}) });
      return reply.code(200).send({ request_id: String(req.id), data: createFields(row, base) });
    },
  );

  app.get(
    '/v1/appointments',
    {
      onRequest: read,
      schema: {
        tags,
        summary: 'List the appointments you may see (at most 1,000 through pagination)',
        querystring: ListQuery,
        response: { 200: pageEnvelope(Type.Array(AppointmentRecord)), ...errorResponses(400) },
      },
    },
    async (req) => {
      const q = req.query;
      const statuses = commaList(q.statuses);
      const bad = statuses.find((s) => !APPOINTMENT_STATUSES.includes(s as AppointmentStatus));
      if (bad !== undefined) throw invalidInput('statuses', `unknown status ${bad}; must be among: ${APPOINTMENT_STATUSES.join(', ')}`);
      const filter: ListFilter = {
        page: q.page,
        pageSize: q.page_size,
        sortBy: q.sort_by ?? 'start_time_utc',
        sortDirection: q.sort_direction ?? 'descending',
        ...(statuses.length ? { statuses: statuses as AppointmentStatus[] } : {}),
        ...(q.developer_patient_id !== undefined ? { developerPatientId: q.developer_patient_id } : {}),
        ...(q.provider_ids ? { providerIds: commaList(q.provider_ids) } : {}),
        ...(q.location_ids ? { locationIds: commaList(q.location_ids) } : {}),
        ...(q.practice_ids ? { practiceIds: commaList(q.practice_ids) } : {}),
      };
      const ts: [keyof ListFilter, string, string | undefined][] = [
        ['startMin', 'start_time_utc_min', q.start_time_utc_min],
        ['startMax', 'start_time_utc_max', q.start_time_utc_max],
        ['createdMin', 'created_time_utc_min', q.created_time_utc_min],
        ['createdMax', 'created_time_utc_max', q.created_time_utc_max],
        ['modifiedMin', 'last_modified_time_utc_min', q.last_modified_time_utc_min],
        ['modifiedMax', 'last_modified_time_utc_max', q.last_modified_time_utc_max],
      ];
      for (const [key, field, value] of ts) {
        const d = timestamp(field, value);
        if (d) (filter as unknown as Record<string, Date>)[key] = d;
      }
      const { rows, totalCount } = await listAppointments(db, principalOf(req), filter);
      const reachable = Math.min(totalCount, LIST_CAP);
      return {
        request_id: String(req.id),
        page: q.page,
        page_size: q.page_size,
        total_count: totalCount,
        next_url: q.page >= 10 ? null : nextUrl(base, req, q.page, q.page_size, reachable),
        data: rows.map((r) => fullRecord(r, base, clock)),
      };
    },
  );

  app.get(
    '/v1/appointments/:appointment_id',
    {
      onRequest: read,
      schema: { tags, summary: 'Read one appointment', params: IdParams, response: { 200: envelope(AppointmentRecord), ...errorResponses(404) } },
    },
    async (req) => {
      const p = principalOf(req);
      const row = await records.find(p, req.params.appointment_id);
      if (!row) throw notFound(`appointment ${req.params.appointment_id} not found`, 'appointment_id');
      await audit(auditReads, { kind: 'principal', principal: p, requestId: serviceRequestId(req) }, {
        env: row.env, developerId: row.developer_id, appointmentId: row.id, action: 'read',
      });
      return { request_id: String(req.id), data: fullRecord(row, base, clock) };
    },
  );

  app.get(
    '/v1/appointments/:appointment_id/participants',
    {
      onRequest: read,
      schema: {
        tags,
        summary: 'Read the participants (the patient) of an appointment',
        params: IdParams,
        response: { 200: envelope(ParticipantsData), ...errorResponses(404) },
      },
    },
    async (req) => ({
      request_id: String(req.id),
      data: await appointmentParticipants(db, principalOf(req), req.params.appointment_id, { publicBaseUrl: base, auditBuffer: auditReads, ...rid(req) }),
    }),
  );

  app.post(
    '/v1/appointments/confirm',
    {
      onRequest: write,
      schema: {
        tags,
        summary: 'Confirm a pending_booking appointment (manual confirmation)',
        body: ConfirmBody,
        response: { 200: envelope(StatusFields), ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => ({ request_id: String(req.id), data: await confirmAppointment(db, principalOf(req), req.body.appointment_id, rid(req)) }),
  );

  app.post(
    '/v1/appointments/cancel',
    {
      onRequest: write,
      config: { alsoCheck: (req) => cancellationReasonErrors(req.body) },
      schema: {
        tags,
        summary: 'Cancel an appointment that is not already cancelled; releases its time',
        body: CancelBody,
        response: { 200: envelope(StatusFields), ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => ({ request_id: String(req.id), data: await cancelAppointment(db, principalOf(req), req.body, rid(req)) }),
  );

  app.post(
    '/v1/appointments/reschedule',
    {
      onRequest: write,
      config: { alsoCheck: (req) => rescheduleProblems(db, principalOf(req), req.body) },
      schema: {
        tags,
        summary: 'Move an appointment to a new start time (only the time changes)',
        body: RescheduleBody,
        response: { 200: envelope(CreateFields), ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => {
      const row = await rescheduleAppointment(db, principalOf(req), req.body, { ...rid(req), clock, ...(outcomes ? { outcomes } : {}) });
      return { request_id: String(req.id), data: createFields(row, base) };
    },
  );

  app.put(
    '/v1/appointments/update-status',
    {
      onRequest: write,
      schema: {
        tags,
        summary: 'Record that the patient arrived, or mark a no_show (0–2 days after the start)',
        body: UpdateStatusBody,
        response: { 200: envelope(StatusFields), ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => ({ request_id: String(req.id), data: await updateAppointmentStatus(db, principalOf(req), req.body, rid(req)) }),
  );
};
