/**
 * Appointment attachments (docs/api/attachments.md#upload-an-attachment, docs/api/appointments.md#lifecycle, docs/api/conventions.md#limits; docs/api/attachments.md#download-an-attachment): jpg, png, pdf or docx,
 * decided by the file's content (never its name or declared type), under 10 MB, not in a failed
 * state nor more than 7 days after the appointment; several of one type allowed. The bytes go to the
 * `AttachmentStore` (files on the embedded engine, the row on PostgreSQL; docs/decisions/0016-attachment-files.md),
 * never through the database while its transaction holds the embedded engine. An upload is an
 * appointment change: it writes its outbox event (`patient.uploaded_attachments` with the
 * `attachment_type`; issue #5 §2) in the same transaction as its row.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { uuid } from '../../lib/ids.js';
import { audit, recordChange } from '../appointments/events.js';
import { appointmentVisibleTo } from '../appointments/visibility.js';
import type { Principal } from '../credentials/principal.js';
import { conflict, invalidFields, invalidInput, notFound } from '../errors.js';
import type { AttachmentStore, SniffedType, StagedAttachment } from './store.js';

/** "Size must be under 10 MB": at most 10 MiB − 1 byte. */
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024 - 1;
export const ATTACHMENT_TYPES = ['community_care_packet', 'pcp_patient_referral'] as const;
export type AttachmentType = (typeof ATTACHMENT_TYPES)[number];

const ALLOWED: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};
const FAILED_STATES = new Set(['booking_failed', 'reschedule_failed']);
const UPLOAD_WINDOW_MS = 7 * 24 * 3600_000;

export interface AttachmentSummary {
  attachment_id: string;
  attachment_type: AttachmentType;
  attachment_url: string;
  content_type: string;
  size_bytes: number;
  created_time_utc: string;
}

/** The allowed type a detected file type stands for; undefined when it is none of jpg, png, pdf, docx. */
function allowedType(found: SniffedType | undefined): SniffedType | undefined {
  if (!found || !(found.ext in ALLOWED)) return undefined;
  return { ext: found.ext, mime: ALLOWED[found.ext]! };
}

/** The file's real type from its first bytes; undefined when it is none of jpg, png, pdf, docx. */
export async function sniffAttachmentType(content: Uint8Array): Promise<SniffedType | undefined> {
  return allowedType(await fileTypeFromBuffer(content));
}

async function summaries(db: Kysely<Database>, appointmentId: string, publicBaseUrl: string): Promise<AttachmentSummary[]> {
  const rows = await db
    .selectFrom('attachments')
    .select(['id', 'attachment_type', 'content_type', 'size_bytes', 'created_at'])
    .where('appointment_id', '=', appointmentId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    attachment_id: r.id,
    attachment_type: r.attachment_type,
    attachment_url: `${publicBaseUrl}/v1/appointments/${appointmentId}/attachments/${r.id}`,
    content_type: r.content_type,
    size_bytes: r.size_bytes,
    created_time_utc: r.created_at.toISOString(),
  }));
}

/**
 * Stores one attachment on a visible appointment (docs/api/attachments.md#upload-an-attachment);
 * returns every attachment of the appointment. `content` is the upload as the store staged it; its
 * bytes are placed in the store before the row's transaction starts, and removed again when the
 * transaction fails.
 */
export async function uploadAttachment(
  db: Kysely<Database>,
  store: AttachmentStore,
  principal: Principal,
  input: { appointmentId: string; attachmentType: string | undefined; content: StagedAttachment | undefined; publicBaseUrl: string; requestId?: string; now?: Date },
): Promise<{ appointment_id: string; attachments: AttachmentSummary[] }> {
  const errors: { field: string; message: string }[] = [];
  if (!input.attachmentType) errors.push({ field: 'attachment_type', message: 'is required' });
  else if (!(ATTACHMENT_TYPES as readonly string[]).includes(input.attachmentType)) {
    errors.push({ field: 'attachment_type', message: `must be one of: ${ATTACHMENT_TYPES.join(', ')}` });
  }
  const staged = input.content;
  let sniffed: SniffedType | undefined;
  if (!staged || staged.size === 0) errors.push({ field: 'attachment', message: 'is required (a file part)' });
  else if (staged.size > MAX_ATTACHMENT_BYTES) errors.push({ field: 'attachment', message: 'must be under 10 MB' });
  else if (!(sniffed = allowedType(await staged.fileType()))) errors.push({ field: 'attachment', message: 'must be a jpg, png, pdf or docx file' });
  if (errors.length) throw invalidFields(errors);

  const now = input.now ?? new Date();
  const id = uuid();
  // Durable before the row exists: a committed row always has its bytes (decision 0016).
  const content = await staged!.place(id);
  try {
    const result = await db.transaction().execute(async (trx) => {
      const appt = await trx
        .selectFrom('appointments')
        .where(appointmentVisibleTo(principal))
        .select(['id', 'env', 'developer_id', 'appointment_status', 'start_time'])
        .where('id', '=', input.appointmentId)
        .forUpdate()
        .executeTakeFirst();
      if (!appt) throw notFound(`appointment ${input.appointmentId} not found`, 'appointment_id');
      if (FAILED_STATES.has(appt.appointment_status)) {
        throw invalidInput('appointment_id', `attachments cannot be added to an appointment in status ${appt.appointment_status}`);
      }
      if (now.getTime() > appt.start_time.getTime() + UPLOAD_WINDOW_MS) {
        throw invalidInput('appointment_id', 'attachments cannot be added more than 7 days after the appointment');
      }
      await trx
        .insertInto('attachments')
        .values({
          id,
          env: appt.env,
          developer_id: appt.developer_id,
          appointment_id: appt.id,
          attachment_type: input.attachmentType as AttachmentType,
          content_type: sniffed!.mime,
          size_bytes: staged!.size,
          sha256: staged!.sha256,
          content,
        })
        .execute();
      await trx.updateTable('appointments').set({ updated_at: now }).where('id', '=', appt.id).execute();
      await recordChange(trx, { kind: 'principal', principal, ...(input.requestId ? { requestId: input.requestId } : {}) }, {
        env: appt.env,
        developerId: appt.developer_id,
        appointmentId: appt.id,
        updateType: 'updated',
        changedAttributes: [{ attribute_path: 'patient.uploaded_attachments', attachment_type: input.attachmentType! }],
        action: 'upload_attachment',
      });
      return { appointment_id: appt.id, attachments: await summaries(trx, appt.id, input.publicBaseUrl) };
    });
    staged!.keep();
    return result;
  } finally {
    await staged!.discard();
  }
}

/** An attachment's bytes as the download serves them: a buffer (bytes in the row) or a checked stream (bytes in the store). */
export interface AttachmentContent {
  body: Buffer | Readable;
  size: number;
  contentType: string;
  attachmentType: string;
}

/**
 * One attachment's bytes, for whoever may read the appointment (docs/api/attachments.md#download-an-attachment).
 * Bytes that no longer match the row's size and SHA-256 (a damaged or missing file, a changed row)
 * are never served: `conflict` naming `attachment_id` (decision 0016).
 */
export async function downloadAttachment(
  db: Kysely<Database>,
  store: AttachmentStore,
  principal: Principal,
  appointmentId: string,
  attachmentId: string,
  requestId?: string,
): Promise<AttachmentContent> {
  const row = await db
    .selectFrom('appointments')
    .where(appointmentVisibleTo(principal))
    .innerJoin('attachments', 'attachments.appointment_id', 'appointments.id')
    .select(['appointments.env', 'appointments.developer_id', 'attachments.id', 'attachments.content', 'attachments.content_type', 'attachments.attachment_type', 'attachments.size_bytes', 'attachments.sha256'])
    .where('appointments.id', '=', appointmentId)
    .where('attachments.id', '=', attachmentId)
    .executeTakeFirst();
  if (!row) throw notFound(`attachment ${attachmentId} of appointment ${appointmentId} not found`, 'attachment_id');
  const damaged = () => conflict(`the stored content of attachment ${attachmentId} failed its integrity check and is not served; upload the file again`, 'attachment_id');
  let body: Buffer | Readable;
  if (row.content) {
    body = Buffer.from(row.content);
    if (body.length !== row.size_bytes || createHash('sha256').update(body).digest('hex') !== row.sha256) throw damaged();
  } else {
    const opened = await store.open({ id: row.id, size_bytes: row.size_bytes, sha256: row.sha256 });
    if (!opened.ok) throw damaged();
    body = opened.stream;
  }
  await audit(db, { kind: 'principal', principal, ...(requestId ? { requestId } : {}) }, {
    env: row.env, developerId: row.developer_id, appointmentId, action: 'download_attachment',
  }).catch((err: unknown) => {
    if (!Buffer.isBuffer(body)) body.destroy();
    throw err;
  });
  return { body, size: row.size_bytes, contentType: row.content_type, attachmentType: row.attachment_type };
}
