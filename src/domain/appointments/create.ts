/**
 * Booking (interface.md §4.1, §2.1; contracts.md §5, §6): validates the request, checks the start
 * time against the schedule, and in one atomic statement stores the patient and the appointment, holds
 * the time (the database refuses an overlap: 409), and writes the outbox event and the audit record.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError, badRequest, type FieldError } from '../errors.js';
import { prefixedId, uuid } from '../../lib/ids.js';
import type { Principal } from '../credentials/principal.js';
import { SANDBOX_FIXTURES } from '../directory/sandbox-fixtures.js';
import { isScheduledStart } from '../scheduling/availability.js';
import { parseOffsetDateTime } from '../scheduling/local-time.js';
import { loadProviderLocations, type ProviderLocationContext } from '../scheduling/schedule-data.js';
import { auditRecord, outboxRecord } from './events.js';
import { rangeLiteral } from './holds.js';
import { patientErrors, type PatientInput } from './patient-rules.js';
import type { AppointmentRow } from './record.js';
import { retrying, slotTaken } from './transactions.js';

export interface CreateInput {
  appointment_type: 'providers';
  data: {
    start_time: string;
    visit_reason_id: string;
    provider_location_id: string;
    patient: PatientInput;
    patient_type: 'new' | 'existing';
    notes?: string;
  };
}

/** The provider-location if it is in the caller's directory and active; otherwise undefined. */
export async function directoryProviderLocation(db: Kysely<Database>, principal: Principal, id: string): Promise<ProviderLocationContext | undefined> {
  const pl = (await loadProviderLocations(db, principal.env, [id], { developerId: principal.developerId })).get(id);
  return pl?.active ? pl : undefined;
}

/** Checks a visit reason exists and the provider accepts it; returns its duration for the patient type. */
export async function visitReasonDuration(
  db: Kysely<Database>,
  env: Principal['env'],
  pl: ProviderLocationContext,
  visitReasonId: string,
  patientType: 'new' | 'existing',
  field: string,
): Promise<number> {
  const vr = await db
    .selectFrom('visit_reasons')
    .select(['duration_new_minutes', 'duration_existing_minutes'])
    .where('env', '=', env)
    .where('id', '=', visitReasonId)
    .executeTakeFirst();
  if (!vr) throw badRequest(field, `unknown visit reason ${visitReasonId}`);
  if (!pl.visitReasonIds.includes(visitReasonId)) throw badRequest(field, 'the provider does not accept this visit reason');
  return patientType === 'new' ? vr.duration_new_minutes : vr.duration_existing_minutes;
}

/** Creates an appointment; returns its row. Throws §7 errors (400 naming the field, 409 when the time is taken). */
export async function createAppointment(
  db: Kysely<Database>,
  principal: Principal,
  input: CreateInput,
  opts: { requestId?: string; now?: Date } = {},
): Promise<AppointmentRow> {
  const now = opts.now ?? new Date();
  const d = input.data;
  const errors: FieldError[] = patientErrors(d.patient, now);
  const start = parseOffsetDateTime(d.start_time);
  if (!start) errors.push({ field: 'data.start_time', message: 'must be an ISO-8601 date-time with a UTC offset' });
  const pl = await directoryProviderLocation(db, principal, d.provider_location_id);
  if (!pl) errors.push({ field: 'data.provider_location_id', message: 'unknown provider location, or not in your directory' });
  if (errors.length) throw new ApiError(400, 'invalid_request', errors);
  const duration = await visitReasonDuration(db, principal.env, pl!, d.visit_reason_id, d.patient_type, 'data.visit_reason_id');

  for (const field of pl!.requiredFields) {
    if (field === 'patient.insurance' && !d.patient.insurance) throw badRequest('data.patient.insurance', 'is required by this provider location');
  }
  if (d.patient.insurance?.insurance_plan_id) {
    const plan = await db.selectFrom('insurance_plans').select('id').where('env', '=', principal.env).where('id', '=', d.patient.insurance.insurance_plan_id).executeTakeFirst();
    if (!plan) throw badRequest('data.patient.insurance.insurance_plan_id', 'unknown insurance plan');
  }

  const startMs = start!.toMillis();
  if (!(await isScheduledStart(db, { env: principal.env, pl: pl!, visitReasonId: d.visit_reason_id, patientType: d.patient_type, startMs, now }))) {
    throw badRequest('data.start_time', 'is not a start time the availability endpoint offers for this provider location, visit reason and patient type');
  }
  const startDate = start!.toJSDate();
  const endDate = start!.plus({ minutes: duration }).toJSDate();
  const manual = pl!.confirmationType === 'manual';
  const neverEvaluated = pl!.id === SANDBOX_FIXTURES.pending;
  const id = uuid();
  const p = d.patient;

  const patientId = prefixedId('pa');
  const actor = { kind: 'principal' as const, principal, ...(opts.requestId ? { requestId: opts.requestId } : {}) };
  const change = { env: principal.env, developerId: principal.developerId, appointmentId: id, updateType: 'created' as const, changedAttributes: [], action: 'create' };
  // One atomic statement: the patient, the appointment, its held time (the no-overlap constraint
  // refuses a taken time: 409), the outbox event and the audit record (contracts.md §5, §7).
  const row = await retrying(() =>
    db
      .with('patient', (qc) =>
        qc.insertInto('patients').values({
          id: patientId,
          env: principal.env,
          developer_id: principal.developerId,
          created_by_user_id: principal.kind === 'user' ? principal.userId : null,
          developer_patient_id: p.developer_patient_id ?? null,
          first_name: p.first_name,
          last_name: p.last_name,
          date_of_birth: p.date_of_birth,
          sex_at_birth: p.sex_at_birth,
          phone_number: p.phone_number,
          email_address: p.email_address,
          address: JSON.stringify(p.patient_address),
          insurance: p.insurance ? JSON.stringify(p.insurance) : null,
          gender: p.gender ?? null,
        }),
      )
      .with('hold', (qc) =>
        qc.insertInto('appointment_holds').values({
          appointment_id: id, kind: 'current', env: principal.env, provider_id: pl!.providerId, during: rangeLiteral(startDate, endDate),
        }),
      )
      .with('event', (qc) => qc.insertInto('outbox_events').values(outboxRecord(actor, change)))
      .with('audit', (qc) => qc.insertInto('audit_log').values(auditRecord(actor, change)))
      .insertInto('appointments')
      .values({
        id,
        env: principal.env,
        developer_id: principal.developerId,
        booked_by_client_id: principal.clientId,
        booked_by_user_id: principal.kind === 'user' ? principal.userId : null,
        patient_id: patientId,
        developer_patient_id: p.developer_patient_id ?? null,
        provider_location_id: pl!.id,
        provider_id: pl!.providerId,
        location_id: pl!.locationId,
        practice_id: pl!.practiceId,
        visit_reason_id: d.visit_reason_id,
        patient_type: d.patient_type,
        start_time: startDate,
        end_time: endDate,
        time_zone: pl!.timeZone,
        pending_start_time: null,
        pending_end_time: null,
        appointment_status: 'pending_booking',
        // contracts.md §6: auto bookings are `pending_evaluation` until the evaluator decides.
        confirmation_type: manual ? 'manual' : 'pending_evaluation',
        visit_type: pl!.visitType,
        is_provider_resource: pl!.isProviderResource,
        notes: d.notes ?? null,
        cancellation_reason: null,
        cancellation_reason_type: null,
        arrived_at: null,
        evaluate_after: manual || neverEvaluated ? null : now,
      })
      .returningAll()
      .executeTakeFirstOrThrow(),
  ).catch((e: unknown) => slotTaken(e, 'this start time is no longer available: another appointment holds it', 'data.start_time'));
  return { ...row, location_phone_number: pl!.locationPhone, location_phone_extension: pl!.locationPhoneExtension };
}
