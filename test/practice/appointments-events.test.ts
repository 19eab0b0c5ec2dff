/**
 * `GET /practice/v1/events` over a real listening server, read with fetch (docs/decisions/0014-practice-workspace.md,
 * "Live calendar"). Until the practice guard is in this branch, a test-only stand-in sets `req.staff`
 * from a header (the practice of the caller); the stream code under test is the real one.
 */
import type { onRequestHookHandler } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffConfirm } from '../../src/domain/practices/appointments/actions.js';
import { practiceAppointmentRoutes } from '../../src/routes/practice/appointments/index.js';
import { PL } from '../appointments/fixtures.js';
import { engineName } from '../helpers/db.js';
import { bookAt, OTHER_PL, practiceEnv, staffOf, type PracticeEnv } from './appointment-fixtures.js';

interface Message { id: string; event: string; data: { appointment_id: string; update_type: string; changed_attributes: unknown[]; occurred_at: string } }

/** Reads SSE messages from a fetch body until `until` holds or `ms` pass. */
async function collect(res: Response, until: (m: Message[]) => boolean, ms: number): Promise<Message[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const out: Message[] = [];
  let buf = '';
  const deadline = Date.now() + ms;
  try {
    while (!until(out) && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now())))]);
      if (!chunk || chunk.done) break;
      buf += decoder.decode(chunk.value, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const fields = Object.fromEntries(block.split('\n').filter((l) => !l.startsWith(':') && l.includes(': ')).map((l) => [l.slice(0, l.indexOf(': ')), l.slice(l.indexOf(': ') + 2)]));
        if (fields.id) out.push({ id: fields.id, event: fields.event!, data: JSON.parse(fields.data!) });
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return out;
}

describe(`practice live events (${engineName})`, () => {
  let e: PracticeEnv;
  let base: string;
  beforeAll(async () => {
    const standIn = ((req, _reply, done) => {
      const practice = String(req.headers['x-test-practice'] ?? '');
      req.staff = staffOf(practice);
      done();
    }) as onRequestHookHandler;
    e = await practiceEnv({
      beforeReady: async (t) => {
        await t.app.register(practiceAppointmentRoutes, { config: t.config, db: t.db, guard: () => standIn, eventPollMs: 200 });
      },
    });
    base = await e.t.listen();
  });
  afterAll(async () => e?.close());

  const open = (practice: string, lastEventId?: string) =>
    fetch(`${base}/practice/v1/events`, { headers: { 'x-test-practice': practice, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });

  it('a booking made through /v1 reaches the stream within 2 s; another practice\'s never; resumable with Last-Event-ID', async () => {
    const res = await open('pt_t');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const theirs = open('pt_o');
    await new Promise((r) => setTimeout(r, 300));
    const other = await bookAt(e, OTHER_PL, 5, 1);
    const t0 = Date.now();
    const mine = await bookAt(e, PL.manual, 5, 1);
    const got = await collect(res, (m) => m.some((x) => x.data.appointment_id === mine.id), 2_000 + (Date.now() - t0));
    expect(Date.now() - t0).toBeLessThan(2_000);
    const first = got.find((x) => x.data.appointment_id === mine.id)!;
    expect(first).toMatchObject({ event: 'created', data: { appointment_id: mine.id, update_type: 'created', changed_attributes: [] } });
    expect(Object.keys(first.data).sort()).toEqual(['appointment_id', 'changed_attributes', 'occurred_at', 'update_type']);
    expect(got.map((x) => x.data.appointment_id)).not.toContain(other.id);
    const otherMessages = await collect(await theirs, (m) => m.some((x) => x.data.appointment_id === other.id), 3_000);
    expect(otherMessages.map((x) => x.data.appointment_id)).toContain(other.id);
    expect(otherMessages.map((x) => x.data.appointment_id)).not.toContain(mine.id);

    // A change made while disconnected arrives on resume, after the last seen event and nothing before it.
    await staffConfirm(e.t.db, staffOf('pt_t'), mine.id);
    const resumed = await collect(await open('pt_t', first.id), (m) => m.some((x) => x.data.appointment_id === mine.id && x.event === 'updated'), 3_000);
    expect(resumed.filter((x) => x.data.appointment_id === mine.id).map((x) => x.event)).toEqual(['updated']);
    expect(resumed.find((x) => x.event === 'updated')!.data.changed_attributes).toEqual([{ attribute_path: 'appointment.status' }]);
  });

  it('a malformed Last-Event-ID is a 400 naming it', async () => {
    const res = await open('pt_t', 'not a cursor');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('Last-Event-ID');
  });

  it('an open stream does not hold up the application\'s close', async () => {
    const res = await open('pt_t');
    expect(res.status).toBe(200);
    const t0 = Date.now();
    await e.t.app.close();
    // Without closing the streams, close() would wait for the shutdown grace (10 s) and then cut them.
    // Up to ~4 s is seen here after the first test: an earlier keep-alive connection of the fetch
    // client, not a stream (every stream socket is gone within a second); see the report.
    expect(Date.now() - t0).toBeLessThan(6_000);
    await res.body?.cancel().catch(() => undefined);
  });
});
