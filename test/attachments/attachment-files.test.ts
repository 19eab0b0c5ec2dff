/**
 * Where attachment bytes live (docs/decisions/0016-attachment-files.md): files under the data
 * directory on the embedded engine, the row on PostgreSQL. Both engines: the same bytes and headers
 * come back; damaged bytes are never served; a sandbox reset, an aborted upload and the start-up
 * sweep leave no file behind; and on the embedded engine a 10 MB upload never passes through PGlite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetSandbox } from '../../src/domain/console/sandbox.js';
import { sweepAttachmentFiles } from '../../src/domain/attachments/sweep.js';
import { book, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';
import { multipart, PDF, PNG } from './files.js';

const onFiles = engineName === 'pglite';
/** A PDF by its header, random after it (nothing compresses), just under the 10 MB limit. */
const BIG = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(10 * 1024 * 1024 - 64), Buffer.from('\n%%EOF\n')]);

describe(`attachment bytes (${onFiles ? 'files under DATA_DIR' : 'the database row'})`, () => {
  let e: SchedulingEnv;
  let appointmentId: string;
  let dir: string;
  beforeAll(async () => {
    e = await schedulingEnv();
    dir = join(e.t.dataDir, 'attachments');
    const free = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
    appointmentId = (await book(e, PL.ny, free[0]!.start_time)).json().data.appointment_id;
  });
  afterAll(async () => e.close());

  const body = (content: Buffer, fields: Record<string, string> = { attachment_type: 'pcp_patient_referral' }) =>
    multipart(fields, [{ name: 'attachment', filename: 'referral.pdf', contentType: 'application/pdf', content }]);
  const upload = (content: Buffer, headers: Record<string, string> = {}) => {
    const m = body(content);
    return e.t.app.inject({ method: 'POST', url: `/v1/appointments/${appointmentId}/attachments`, headers: { ...bearer(e.token), 'content-type': m.contentType, ...headers }, payload: m.body });
  };
  const download = (id: string) => e.t.app.inject({ url: `/v1/appointments/${appointmentId}/attachments/${id}`, headers: bearer(e.token) });
  const files = async () => (onFiles ? (await readdir(dir)).sort() : []);
  const rowCount = async () => Number((await e.t.db.selectFrom('attachments').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

  it('a 10 MB upload comes back byte for byte with its headers; on the embedded engine as a file, never through PGlite', async () => {
    const res = await upload(BIG);
    expect(res.statusCode, res.body).toBe(200);
    const { attachment_id: id, size_bytes } = res.json().data.attachments.at(-1);
    expect(size_bytes).toBe(BIG.length);
    const got = await download(id);
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(BIG)).toBe(true);
    expect(got.headers['content-type']).toBe('application/pdf');
    expect(got.headers['content-length']).toBe(String(BIG.length));
    expect(got.headers['content-disposition']).toBe('attachment; filename="pcp_patient_referral.pdf"');
    expect(got.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    const row = await e.t.db.selectFrom('attachments').select(['content', 'sha256', 'size_bytes']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.size_bytes).toBe(BIG.length);
    const size = Number((await sql<{ n: string }>`SELECT pg_total_relation_size('attachments') AS n`.execute(e.t.db)).rows[0]!.n);
    if (onFiles) {
      expect(row.content).toBeNull();
      expect((await readFile(join(dir, id))).equals(BIG)).toBe(true);
      // The table never held the bytes: 10 MB of random bytes cannot compress below 1 MB.
      expect(size).toBeLessThan(1024 * 1024);
    } else {
      expect(Buffer.from(row.content!).equals(BIG)).toBe(true);
      expect(size).toBeGreaterThan(BIG.length);
    }
  });

  it('answers /healthz and /readyz (a database round trip) while a 10 MB upload is still arriving', async () => {
    const url = new URL(await e.t.listen());
    const m = body(BIG);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('close', () => resolve(text));
    });
    socket.write(
      `POST /v1/appointments/${appointmentId}/attachments HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${e.token}\r\n` +
        `content-type: ${m.contentType}\r\ncontent-length: ${m.body.length}\r\nconnection: close\r\n\r\n`,
    );
    const half = Math.floor(m.body.length / 2);
    await new Promise<void>((resolve) => socket.write(m.body.subarray(0, half), () => resolve()));
    // The upload's body is half sent: other requests, database ones included, are answered meanwhile.
    expect((await fetch(`${url.origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${url.origin}/readyz`)).status).toBe(200);
    socket.write(m.body.subarray(half));
    expect((await answer).split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
  });

  it('never serves bytes that fail their check: a changed, truncated or missing file (or row) is 409 naming attachment_id', async () => {
    const id = (await upload(PDF)).json().data.attachments.at(-1).attachment_id as string;
    expect((await download(id)).statusCode).toBe(200);
    const tampered = Buffer.from(PDF);
    tampered[20] = tampered[20]! ^ 0xff;
    const damage = async (content: Buffer | null) => {
      if (!onFiles) {
        await e.t.db.updateTable('attachments').set({ content: content ?? Buffer.alloc(0) }).where('id', '=', id).execute();
      } else if (content) await writeFile(join(dir, id), content);
      else await rm(join(dir, id));
    };
    for (const bad of [tampered, PDF.subarray(0, 10), null]) {
      await damage(bad);
      const res = await download(id);
      expect(res.statusCode).toBe(409);
      expect(res.headers['content-type']).toContain('application/json');
      expect(res.json().errors).toEqual([{ field: 'attachment_id', message: expect.stringContaining('integrity check') }]);
    }
  });

  it('a row that carries its bytes (written before migration 0022) is served from the column on either engine', async () => {
    const id = (await upload(PDF)).json().data.attachments.at(-1).attachment_id as string;
    const old = Buffer.concat([PNG, Buffer.from('written by an older version')]);
    await e.t.db
      .updateTable('attachments')
      .set({ content: old, size_bytes: old.length, sha256: createHash('sha256').update(old).digest('hex'), content_type: 'image/png' })
      .where('id', '=', id)
      .execute();
    if (onFiles) await rm(join(dir, id));
    const res = await download(id);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(old)).toBe(true);
    expect(res.headers['content-type']).toBe('image/png');
  });

  it.skipIf(!onFiles)('a file changed after its check, while it streams, fails the stream rather than ending it as if whole', async () => {
    const id = (await upload(PDF)).json().data.attachments.at(-1).attachment_id as string;
    const row = await e.t.db.selectFrom('attachments').select(['id', 'size_bytes', 'sha256']).where('id', '=', id).executeTakeFirstOrThrow();
    const opened = await e.t.attachments.open(row);
    if (!opened.ok) throw new Error(opened.reason);
    const changed = Buffer.from(PDF);
    changed[5] = changed[5]! ^ 0xff;
    await writeFile(join(dir, id), changed);
    await expect((async () => {
      for await (const chunk of opened.stream) void chunk;
    })()).rejects.toThrow('changed while it was served');
  });

  it('a repeat with the same Idempotency-Key and the same file (another multipart boundary) is replayed; another file of the same size is 409', async () => {
    const key = { 'idempotency-key': `files-${randomBytes(4).toString('hex')}` };
    const before = await files();
    const first = await upload(PNG, key);
    expect(first.statusCode).toBe(200);
    const again = await upload(PNG, key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().data).toEqual(first.json().data);
    const sameSize = Buffer.from(PNG);
    sameSize[PNG.length - 1] = sameSize[PNG.length - 1]! ^ 0xff;
    expect((await upload(sameSize, key)).statusCode).toBe(409);
    // Neither the replay nor the refusal left a file behind.
    if (onFiles) expect((await files()).length).toBe(before.length + 1);
  });

  it('an upload aborted halfway leaves no file and no row', async () => {
    const url = new URL(await e.t.listen());
    const before = { rows: await rowCount(), files: await files() };
    const m = body(BIG);
    const socket = connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /v1/appointments/${appointmentId}/attachments HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${e.token}\r\n` +
        `content-type: ${m.contentType}\r\ncontent-length: ${m.body.length}\r\n\r\n`,
    );
    await new Promise<void>((resolve) => socket.write(m.body.subarray(0, m.body.length / 2), () => resolve()));
    // The staging file exists while the body arrives (on the embedded engine).
    const deadline = Date.now() + scaled(5000);
    while (onFiles && (await files()).length === before.files.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (onFiles) expect((await files()).some((f) => f.startsWith('.staging-'))).toBe(true);
    socket.destroy();
    while (onFiles && (await files()).length !== before.files.length && Date.now() < deadline + scaled(5000)) await new Promise((r) => setTimeout(r, 20));
    expect(await files()).toEqual(before.files);
    expect(await rowCount()).toBe(before.rows);
  });

  it.skipIf(!onFiles)('the start-up sweep removes staging files and files no row names, and keeps the rest', async () => {
    const kept = await files();
    await writeFile(join(dir, '.staging-left-by-a-crash'), 'x');
    await writeFile(join(dir, '0b0e6a52-0000-4000-8000-000000000000'), 'an upload whose row never committed');
    expect(await sweepAttachmentFiles(e.t.db, e.t.attachments)).toBe(1);
    expect(await files()).toEqual(kept);
  });

  it('a sandbox reset removes the attachments with their rows', async () => {
    expect(await rowCount()).toBeGreaterThan(0);
    const counts = await resetSandbox(e.t.db, 'sandbox', e.dev.developer_id, e.t.attachments);
    expect(counts.attachments).toBeGreaterThan(0);
    expect(await rowCount()).toBe(0);
    expect(await files()).toEqual([]);
  });
});
