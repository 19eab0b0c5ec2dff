/**
 * `GET /practice/v1/events` over a real listening server, read with fetch (docs/decisions/0014-practice-workspace.md,
 * "Live calendar"), with real staff tokens of the workspace client through the real practice guard.
 * The streams poll only every 30 s on PGlite here, so a `/v1` booking seen within 10 s was delivered by
 * the wake-up of this process's appointment writes, not by a poll. (On PostgreSQL the read's commit
 * horizon can wait on other sessions' transactions, up to 1 s, which a wake-up cannot shorten: the
 * default poll is kept there.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PL } from '../appointments/fixtures.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { PL_B, practiceEnv, practiceMember, PRACTICE_A, PRACTICE_B, type PracticeLogin } from '../helpers/practice.js';
import type { SchedulingEnv } from '../appointments/fixtures.js';
import { bookAt } from './appointment-fixtures.js';

interface Message { id: string; event: string; data: { appointment_id: string; update_type: string; changed_attributes: unknown[]; occurred_at: string } }

const POLL_MS = engineName === 'pglite' ? 30_000 : 500;

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
  let e: SchedulingEnv;
  let base: string;
  let staffA: PracticeLogin;
  let staffB: PracticeLogin;
  beforeAll(async () => {
    e = await practiceEnv({ practiceEventPollMs: POLL_MS });
    staffA = await practiceMember(e.t, { practiceId: PRACTICE_A, role: 'practice_staff' });
    staffB = await practiceMember(e.t, { practiceId: PRACTICE_B, role: 'practice_staff' });
    base = await e.t.listen();
  });
  afterAll(async () => e?.close());

  const open = (token: string, lastEventId?: string) =>
    fetch(`${base}/practice/v1/events`, { headers: { ...bearer(token), ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });

  it('no token is 401 before any stream opens', async () => {
    const res = await fetch(`${base}/practice/v1/events`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('a booking made through /v1 reaches the stream at once (pushed, not polled); another practice\'s never; resumable with Last-Event-ID', async () => {
    const res = await open(staffA.token);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const theirs = open(staffB.token);
    await new Promise((r) => setTimeout(r, 300));
    const other = await bookAt(e, PL_B, 5, 1);
    const t0 = Date.now();
    const mine = await bookAt(e, PL.manual, 5, 1);
    // On PGlite the stream polls every 30 s: an event that arrives well before the first poll was
    // pushed by the wake-up (the property; no latency is asserted, this host's CPU is unsteady).
    const got = await collect(res, (m) => m.some((x) => x.data.appointment_id === mine.id), engineName === 'pglite' ? POLL_MS / 3 : 10_000);
    expect(got.map((x) => x.data.appointment_id)).toContain(mine.id);
    if (engineName === 'pglite') expect(Date.now() - t0).toBeLessThan(POLL_MS / 3);
    const first = got.find((x) => x.data.appointment_id === mine.id)!;
    expect(first).toMatchObject({ event: 'created', data: { appointment_id: mine.id, update_type: 'created', changed_attributes: [] } });
    expect(Object.keys(first.data).sort()).toEqual(['appointment_id', 'changed_attributes', 'occurred_at', 'update_type']);
    expect(got.map((x) => x.data.appointment_id)).not.toContain(other.id);
    const otherMessages = await collect(await theirs, (m) => m.some((x) => x.data.appointment_id === other.id), 3_000);
    expect(otherMessages.map((x) => x.data.appointment_id)).toContain(other.id);
    expect(otherMessages.map((x) => x.data.appointment_id)).not.toContain(mine.id);

    // A change made while disconnected (a practice move through the API) arrives on resume, after the
    // last seen event and nothing before it.
    const confirmed = await e.t.app.inject({ method: 'POST', url: `/practice/v1/appointments/${mine.id}/confirm`, headers: bearer(staffA.token) });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    const resumed = await collect(await open(staffA.token, first.id), (m) => m.some((x) => x.data.appointment_id === mine.id && x.event === 'updated'), 3_000);
    expect(resumed.filter((x) => x.data.appointment_id === mine.id).map((x) => x.event)).toEqual(['updated']);
    expect(resumed.find((x) => x.event === 'updated')!.data.changed_attributes).toEqual([{ attribute_path: 'appointment.status' }]);
  });

  it('a malformed Last-Event-ID is a 400 naming it', async () => {
    const res = await open(staffA.token, 'not a cursor');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0]!.field).toBe('Last-Event-ID');
  });

  it('an open stream does not hold up the application\'s close', async () => {
    const res = await open(staffA.token);
    expect(res.status).toBe(200);
    const t0 = Date.now();
    await e.t.app.close();
    // Without closing the streams, close() would wait for the shutdown grace (10 s) and then cut them.
    // A few seconds may go to an earlier keep-alive connection of the fetch client, not to a stream.
    expect(Date.now() - t0).toBeLessThan(6_000);
    await res.body?.cancel().catch(() => undefined);
  });
});
