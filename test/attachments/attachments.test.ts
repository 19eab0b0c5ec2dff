import { request } from 'node:http';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, clientToken } from '../helpers/auth.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { docx, JPG, multipart, PDF, PNG, TEXT } from './files.js';

describe('appointment attachments', () => {
  let e: SchedulingEnv;
  let appointmentId: string;
  beforeAll(async () => {
    e = await schedulingEnv();
    const free = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
    const res = await book(e, PL.ny, free[0]!.start_time);
    expect(res.statusCode).toBe(200);
    appointmentId = res.json().data.appointment_id;
  });
  afterAll(async () => e.close());

  const upload = (id: string, fields: Record<string, string>, files: Parameters<typeof multipart>[1], token = e.token) => {
    const m = multipart(fields, files);
    return e.t.app.inject({ method: 'POST', url: `/v1/appointments/${id}/attachments`, headers: { ...bearer(token), 'content-type': m.contentType }, payload: m.body });
  };
  const file = (content: Buffer, filename = 'file.bin', contentType = 'application/octet-stream') => [{ name: 'attachment', filename, contentType, content }];

  it('stores each allowed type, decided by content, and lists every attachment; several of one type are allowed', async () => {
    for (const [content, mime] of [[PDF, 'application/pdf'], [PNG, 'image/png'], [JPG, 'image/jpeg'], [docx(), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document']] as const) {
      const res = await upload(appointmentId, { attachment_type: 'pcp_patient_referral' }, file(content));
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.request_id).toBe(res.headers['x-request-id']);
      expect(body.data.appointment_id).toBe(appointmentId);
      expect(body.data.attachments.at(-1)).toMatchObject({ attachment_type: 'pcp_patient_referral', content_type: mime, size_bytes: content.length });
    }
    const list = (await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(PDF))).json().data.attachments;
    expect(list).toHaveLength(5);
  });

  it('ignores the file name and declared type: a PNG named .pdf is stored as a PNG; text named .pdf is refused', async () => {
    const res = await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(PNG, 'scan.pdf', 'application/pdf'));
    expect(res.json().data.attachments.at(-1).content_type).toBe('image/png');
    const bad = await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(TEXT, 'letter.pdf', 'application/pdf'));
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([{ field: 'attachment', message: 'must be a jpg, png, pdf or docx file' }]);
  });

  it('names every bad part: missing file, missing or unknown attachment_type', async () => {
    const res = await upload(appointmentId, {}, []);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((x: { field: string }) => x.field).sort()).toEqual(['attachment', 'attachment_type']);
    const unknown = await upload(appointmentId, { attachment_type: 'selfie' }, file(PDF));
    expect(unknown.json().errors[0]).toMatchObject({ field: 'attachment_type' });
    const json = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${appointmentId}/attachments`, headers: bearer(e.token), payload: { attachment: 'x' } });
    expect(json.statusCode).toBe(415);
  });

  it('refuses 10 MB or more while streaming, with the error body, and closes the connection', async () => {
    const big = Buffer.concat([PDF, Buffer.alloc(10 * 1024 * 1024, 32)]);
    const res = await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(big, 'big.pdf', 'application/pdf'));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ field: 'attachment', message: 'must be under 10 MB' }]);
    // Over real HTTP: the answer comes before the client has sent everything (and the connection
    // then closes: test/security/oversized-bodies.test.ts).
    const url = new URL(await e.t.listen());
    const m = multipart({ attachment_type: 'community_care_packet' }, file(big, 'big.pdf', 'application/pdf'));
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, method: 'POST', path: `/v1/appointments/${appointmentId}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType, 'content-length': String(m.body.length * 3) } }, (r) => {
        resolve(r.statusCode ?? 0);
        r.resume();
      });
      req.on('error', reject);
      req.write(m.body); // a third of what was announced: the server must not wait for the rest
    });
    expect(status).toBe(400);
  });

  it('refuses uploads in a failed state and more than 7 days after the appointment', async () => {
    const free = await slots(e, PL.ny, { start: nyDate(4), end: nyDate(4) });
    const id = (await book(e, PL.ny, free[0]!.start_time)).json().data.appointment_id;
    await e.t.db.updateTable('appointments').set({ appointment_status: 'booking_failed' }).where('id', '=', id).execute();
    const failed = await upload(id, { attachment_type: 'community_care_packet' }, file(PDF));
    expect(failed.statusCode).toBe(400);
    expect(failed.json().errors[0].message).toContain('booking_failed');
    await e.t.db.updateTable('appointments').set({ appointment_status: 'reschedule_failed' }).where('id', '=', id).execute();
    const rescheduleFailed = await upload(id, { attachment_type: 'pcp_patient_referral' }, file(PDF));
    expect(rescheduleFailed.statusCode).toBe(400);
    expect(rescheduleFailed.json().errors[0]).toMatchObject({ field: 'appointment_id' });
    expect(rescheduleFailed.json().errors[0].message).toContain('reschedule_failed');
    expect(await e.t.db.selectFrom('attachments').select('id').where('appointment_id', '=', id).execute()).toEqual([]);
    await e.t.db.updateTable('appointments').set({ appointment_status: 'confirmed', start_time: DateTime.now().minus({ days: 8 }).toJSDate(), end_time: DateTime.now().minus({ days: 8 }).plus({ minutes: 30 }).toJSDate() }).where('id', '=', id).execute();
    const late = await upload(id, { attachment_type: 'community_care_packet' }, file(PDF));
    expect(late.statusCode).toBe(400);
    expect(late.json().errors[0].message).toContain('7 days');
  });

  it('writes the change to the outbox (skipped: the developer made it) and lists the files in participants', async () => {
    const events = await e.t.db.selectFrom('outbox_events').select(['changed_attributes', 'status']).where('appointment_id', '=', appointmentId).orderBy('occurred_at', 'desc').execute();
    expect(events[0]).toEqual({ changed_attributes: [{ attribute_path: 'patient.uploaded_attachments', attachment_type: 'community_care_packet' }], status: 'skipped' });
    const parts = await e.t.app.inject({ url: `/v1/appointments/${appointmentId}/participants`, headers: bearer(e.token) });
    const uploaded = parts.json().data.patient.uploaded_attachments;
    expect(uploaded.length).toBeGreaterThanOrEqual(6);
    const download = await e.t.app.inject({ url: new URL(uploaded[0].attachment_url).pathname, headers: bearer(e.token) });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('application/pdf');
    expect(download.rawPayload.equals(PDF)).toBe(true);
    expect(download.headers['content-disposition']).toContain('attachment');
  });

  it('security: no token 401, read-only token 403, another developer 404, unknown appointment 404', async () => {
    const m = multipart({ attachment_type: 'community_care_packet' }, file(PDF));
    const none = await e.t.app.inject({ method: 'POST', url: `/v1/appointments/${appointmentId}/attachments`, headers: { 'content-type': m.contentType }, payload: m.body });
    expect(none.statusCode).toBe(401);
    const readOnly = await clientToken(e.t, e.dev, 'external.appointment.read');
    expect((await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(PDF), readOnly)).statusCode).toBe(403);
    const other = await upload(appointmentId, { attachment_type: 'community_care_packet' }, file(PDF), e.otherToken);
    expect(other.statusCode).toBe(404);
    expect(other.json().errors[0].field).toBe('appointment_id');
    expect((await upload('00000000-0000-0000-0000-000000000000', { attachment_type: 'community_care_packet' }, file(PDF))).statusCode).toBe(404);
    const attachments = await e.t.db.selectFrom('attachments').select('id').where('appointment_id', '=', appointmentId).execute();
    const dl = await e.t.app.inject({ url: `/v1/appointments/${appointmentId}/attachments/${attachments[0]!.id}`, headers: bearer(e.otherToken) });
    expect(dl.statusCode).toBe(404);
  });
});

describe('attachments with Idempotency-Key', () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  it('replays the same upload once, and refuses the key with another file', async () => {
    const free = await slots(e, PL.ny, { start: nyDate(5), end: nyDate(5) });
    const id = (await book(e, PL.ny, free[0]!.start_time)).json().data.appointment_id;
    const send = (content: Buffer) => {
      const m = multipart({ attachment_type: 'community_care_packet' }, [{ name: 'attachment', filename: 'a.pdf', contentType: 'application/pdf', content }]);
      return e.t.app.inject({ method: 'POST', url: `/v1/appointments/${id}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType, 'idempotency-key': 'upload-1' }, payload: m.body });
    };
    const first = await send(PDF);
    expect(first.statusCode).toBe(200);
    const again = await send(PDF);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data).toEqual(first.json().data);
    const other = await send(PNG);
    expect(other.statusCode).toBe(409);
    const stored = await e.t.db.selectFrom('attachments').select('id').where('appointment_id', '=', id).execute();
    expect(stored).toHaveLength(1);
  });
});
