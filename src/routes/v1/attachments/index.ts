/**
 * `POST /v1/appointments/{appointment_id}/attachments` (docs/api/attachments.md#upload-an-attachment) and the download
 * `GET …/attachments/{attachment_id}` (docs/api/attachments.md#download-an-attachment). Multipart parsing is scoped to this plugin;
 * the file is held in memory only up to the 10 MB limit, and a larger upload is refused while it
 * streams (the connection is closed instead of reading the rest).
 */
import { serviceRequestId } from '../../../http/request-id.js';
import multipart, { type MultipartFile, type MultipartValue } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import { ATTACHMENT_TYPES, MAX_ATTACHMENT_BYTES, downloadAttachment, uploadAttachment } from '../../../domain/attachments/attachments.js';
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

export const attachmentRoutes: FastifyPluginAsyncTypebox<{ config: Config; db: Db }> = async (app, { config, db }) => {
  await app.register(multipart, {
    attachFieldsToBody: true,
    throwFileSizeLimit: true,
    limits: { fileSize: MAX_ATTACHMENT_BYTES, files: 1, fields: 5, parts: 6, fieldSize: 1024, headerPairs: 50 },
  });

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
            throw invalidFields([{ field: 'attachment', message: 'must be under 10 MB' }]);
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
      const content = file && typeof file === 'object' && file.type === 'file' ? await file.toBuffer() : undefined;
      const attachmentType = typePart && typeof typePart === 'object' && typePart.type === 'field' ? String(typePart.value) : undefined;
      const data = await uploadAttachment(db, principalOf(req), {
        appointmentId: req.params.appointment_id,
        attachmentType,
        content,
        publicBaseUrl: config.publicBaseUrl,
        requestId: serviceRequestId(req),
      });
      return { request_id: req.id, data };
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
        response: { 200: Type.Any({ description: 'The file, with its sniffed content type' }), ...errorResponses(404) },
      },
    },
    async (req, reply) => {
      const a = await downloadAttachment(db, principalOf(req), req.params.appointment_id, req.params.attachment_id, req.id);
      const ext = a.contentType.includes('pdf') ? 'pdf' : a.contentType.includes('png') ? 'png' : a.contentType.includes('jpeg') ? 'jpg' : 'docx';
      reply
        .type(a.contentType)
        .header('content-disposition', `attachment; filename="${a.attachmentType}.${ext}"`)
        .header('content-security-policy', "default-src 'none'; sandbox");
      return reply.send(a.content);
    },
  );
};
