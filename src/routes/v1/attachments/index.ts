/**
 * `POST /v1/appointments/{appointment_id}/attachments` (docs/api/attachments.md#upload-an-attachment) and the download
 * `GET …/attachments/{attachment_id}` (docs/api/attachments.md#download-an-attachment). Multipart parsing is scoped to this plugin;
 * the file part streams into the `AttachmentStore` as it arrives (to a staging file on the embedded
 * engine; docs/decisions/0016-attachment-files.md), hashed on the way; a larger upload is refused
 * while it streams (the connection is closed instead of reading the rest). Downloads stream from the
 * store.
 */
import { serviceRequestId } from '../../../http/request-id.js';
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { ATTACHMENT_TYPES, MAX_ATTACHMENT_BYTES, downloadAttachment, uploadAttachment } from '../../../domain/attachments/attachments.js';
import { AttachmentTooLarge, type AttachmentStore, type StagedAttachment } from '../../../domain/attachments/store.js';
import { principalOf } from '../../../http/auth-guard.js';
import { invalidFields, unsupportedMediaType } from '../../../domain/errors.js';
import { closeAfterAnswer } from '../../../http/lingering-close.js';
import { errorResponses } from '../common-schemas.js';

const Attachment = Type.Object({
  attachment_id: Type.String(),
  attachment_type: Type.String(),
  attachment_url: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  created_time_utc: Type.String(),
});

const UploadResponse = Type.Object({
  request_id: Type.String(),
  data: Type.Object({ appointment_id: Type.String(), attachments: Type.Array(Attachment) }),
});

/** Documentation-only body schema (multipart parts are checked in the domain, field by field). */
const UploadBody = Type.Object({
  attachment: Type.String({ format: 'binary', description: 'The file: jpg, png, pdf or docx, under 10 MB' }),
  attachment_type: Type.Union(ATTACHMENT_TYPES.map((t) => Type.Literal(t))),
});

/** The largest multipart body an attachment can arrive in: the file and up to 1 MiB of framing and fields. */
const MAX_UPLOAD_BODY_BYTES = MAX_ATTACHMENT_BYTES + 1024 * 1024;

const MULTIPART_ERRORS: Record<string, { field: string; message: string }> = {
  FST_REQ_FILE_TOO_LARGE: { field: 'attachment', message: 'must be under 10 MB' },
  FST_FILES_LIMIT: { field: 'attachment', message: 'send exactly one file' },
  FST_PARTS_LIMIT: { field: 'attachment', message: 'too many parts' },
  FST_FIELDS_LIMIT: { field: 'attachment_type', message: 'too many fields' },
  FST_PROTO_VIOLATION: { field: 'attachment', message: 'malformed multipart body' },
  // The body ended before the multipart closing boundary (found by test/security/fuzz.test.ts).
  ERR_STREAM_PREMATURE_CLOSE: { field: 'attachment', message: 'malformed multipart body' },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { field: 'attachment', message: 'the body must be multipart/form-data' },
};

const TOO_LARGE = { field: 'attachment', message: 'must be under 10 MB' };

declare module 'fastify' {
  interface FastifyRequest {
    /** The upload's file as the store staged it, until the handler takes it (or the request ends without it). */
    stagedAttachment?: StagedAttachment;
  }
}

/**
 * The staged file part, as the idempotency check sees it: a file part's `value` is this object, whose
 * only enumerable fields are its size and SHA-256 (src/http/idempotency.ts fingerprints them).
 */
function fingerprint(staged: StagedAttachment): { size: number; sha256: string } {
  return { size: staged.size, sha256: staged.sha256 };
}

export const attachmentRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db; attachments: AttachmentStore }> = async (app, { config, db, attachments }) => {
  await app.register(multipart, {
    attachFieldsToBody: true,
    throwFileSizeLimit: true,
    // The file part streams into the store (a staging file on the embedded engine), hashed as it
    // arrives: never a 10 MB buffer, never through the database (decision 0016).
    async onFile(this: FastifyRequest, part) {
      let staged: StagedAttachment;
      try {
        staged = await attachments.stage(part.file, MAX_ATTACHMENT_BYTES);
      } catch (err) {
        if (err instanceof AttachmentTooLarge) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
        throw err;
      }
      // Held on the request until the handler takes it; dropped when the request ends otherwise.
      if (this.stagedAttachment) await this.stagedAttachment.discard();
      this.stagedAttachment = staged;
      if (part.file.truncated) throw Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' });
      (part as { value?: unknown }).value = fingerprint(staged);
    },
    limits: { fileSize: MAX_ATTACHMENT_BYTES, files: 1, fields: 5, parts: 6, fieldSize: 1024, headerPairs: 50 },
  });

  // A staged file the handler did not take (a refused or replayed request, a multipart error, an
  // aborted upload) is removed before the answer goes out (so a client that has its answer finds no
  // file of that request left), or, for a request that gets no answer, when it ends.
  const dropStaged = async (req: FastifyRequest) => {
    const staged = req.stagedAttachment;
    req.stagedAttachment = undefined;
    await staged?.discard();
  };
  app.addHook('onSend', async (req, _reply, payload) => {
    await dropStaged(req);
    return payload;
  });
  app.addHook('onResponse', dropStaged);
  app.addHook('onRequestAbort', dropStaged);

  // Multipart failures are the client's: an error body naming the part (400, as for every attachment
  // rule, a file of 10 MB or more included), and the connection closes after the answer so an
  // oversized upload is not read to its end.
  app.setErrorHandler((err, req, reply) => {
    const code = (err as { code?: string }).code;
    const known = code ? MULTIPART_ERRORS[code] : undefined;
    if (!known) throw err;
    closeAfterAnswer(req, reply);
    throw invalidFields([known]);
  });

  app.post(
    '/v1/appointments/:appointment_id/attachments',
    {
      onRequest: [
        app.guard({ scope: 'external.appointment.write' }),
        // A body that announces more than a file under 10 MB and its multipart framing can hold is
        // refused before a byte of it is read (the same 400 as a file found too large while
        // streaming), not read to its end.
        async (req, reply) => {
          if (Number(req.headers['content-length'] ?? 0) > MAX_UPLOAD_BODY_BYTES) {
            closeAfterAnswer(req, reply);
            throw invalidFields([TOO_LARGE]);
          }
        },
      ],
      // The body is multipart: its parts are validated in the domain (every bad part is named).
      validatorCompiler: () => () => true,
      schema: {
        tags: ['appointments'],
        summary: 'Upload an attachment to an appointment',
        consumes: ['multipart/form-data'],
        params: Type.Object({ appointment_id: Type.String({ maxLength: 100 }) }),
        body: UploadBody,
        response: { 200: UploadResponse, ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      if (!req.isMultipart()) throw unsupportedMediaType('the body must be multipart/form-data');
      const body = (req.body ?? {}) as unknown as Record<string, MultipartFile | MultipartValue | undefined>;
      const file = body.attachment;
      const typePart = body.attachment_type;
      // The handler owns the staged file from here: uploadAttachment places or discards it.
      const staged = req.stagedAttachment;
      req.stagedAttachment = undefined;
      try {
        const content = file && typeof file === 'object' && file.type === 'file' ? staged : undefined;
        const attachmentType = typePart && typeof typePart === 'object' && typePart.type === 'field' ? String(typePart.value) : undefined;
        const data = await uploadAttachment(db, attachments, principalOf(req), {
          appointmentId: req.params.appointment_id,
          attachmentType,
          content,
          publicBaseUrl: config.publicBaseUrl,
          requestId: serviceRequestId(req),
        });
        return { request_id: req.id, data };
      } finally {
        await staged?.discard();
      }
    },
  );

  app.get(
    '/v1/appointments/:appointment_id/attachments/:attachment_id',
    {
      onRequest: app.guard({ scope: 'external.appointment.read' }),
      schema: {
        tags: ['appointments'],
        summary: 'Download an attachment',
        params: Type.Object({ appointment_id: Type.String({ maxLength: 100 }), attachment_id: Type.String({ maxLength: 100 }) }),
        response: { 200: Type.Any({ description: 'The file, with its sniffed content type' }), ...errorResponses(404, 409) },
      },
    },
    async (req, reply) => {
      const a = await downloadAttachment(db, attachments, principalOf(req), req.params.appointment_id, req.params.attachment_id, req.id).catch((err: unknown) => {
        // Stored bytes that fail their check are never served; the operator hears of it (decision 0016).
        if ((err as { kind?: string }).kind === 'conflict') req.log.error({ event: 'attachment_integrity_failed', attachment_id: req.params.attachment_id }, 'attachment content failed its integrity check');
        throw err;
      });
      const ext = a.contentType.includes('pdf') ? 'pdf' : a.contentType.includes('png') ? 'png' : a.contentType.includes('jpeg') ? 'jpg' : 'docx';
      reply
        .type(a.contentType)
        .header('content-disposition', `attachment; filename="${a.attachmentType}.${ext}"`)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('content-length', String(a.size));
      return reply.send(a.body);
    },
  );
};
