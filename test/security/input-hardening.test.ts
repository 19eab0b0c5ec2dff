/**
 * Hostile input details (issue #16 §6): `__proto__` and `constructor.prototype` keys get the same
 * truthful 400 on every JSON route (API, admin, token endpoint), naming the key; a caller's
 * `X-Request-Id` is echoed but the audit log keeps the service's own id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { createBody, nyDate, PL, schedulingEnv, slots, type SchedulingEnv } from '../appointments/fixtures.js';

describe(`input hardening (${engineName})`, () => {
  let e: SchedulingEnv;
  beforeAll(async () => {
    e = await schedulingEnv();
  });
  afterAll(async () => e.close());

  const post = (url: string, payload: string, headers: Record<string, string>) =>
    e.t.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload });

  it('refuses __proto__ and constructor.prototype keys with a 400 that names the key, on every kind of JSON route', async () => {
    const bodies: [string, string][] = [
      ['{"__proto__":{"polluted":1}}', '__proto__'],
      ['{"data":{"patient":{"__proto__":{"x":1}}}}', 'data.patient.__proto__'],
      ['{"constructor":{"prototype":{"x":1}}}', 'constructor.prototype'],
    ];
    for (const [body, field] of bodies) {
      for (const [url, headers] of [['/v1/appointments', bearer(e.token)], ['/admin/v1/developers', { authorization: 'Bearer test-admin-token-0123456789abcdefgh' }]] as const) {
        const res = await post(url, body, headers);
        expect(res.statusCode, `${url} ${body}`).toBe(400);
        expect(res.json()).toEqual({ request_id: res.headers['x-request-id'], error_type: 'invalid_request', errors: [{ field, message: expect.stringMatching(/^key not allowed/) }] });
      }
      const token = await post('/auth/oauth/token', body, {});
      expect(token.statusCode).toBe(400);
      expect(token.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining(`${field}: key not allowed`) });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Malformed JSON is still called that.
    expect((await post('/v1/appointments', '{"a":', bearer(e.token))).json().errors[0].message).toBe('request body is not valid JSON');
  });

  it("echoes a caller's X-Request-Id but writes the service's own id to the audit log", async () => {
    const [slot] = await slots(e, PL.ny, { start: nyDate(3), end: nyDate(3) });
    const res = await e.t.app.inject({
      method: 'POST',
      url: '/v1/appointments',
      headers: { ...bearer(e.token), 'x-request-id': 'caller-trace-77' },
      payload: createBody(PL.ny, slot!.start_time),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-request-id']).toBe('caller-trace-77');
    expect(res.json().request_id).toBe('caller-trace-77');
    const rows = await e.t.db.selectFrom('audit_log').select('request_id').where('appointment_id', '=', res.json().data.appointment_id).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.request_id).toMatch(/^req_[0-9a-f]{24}$/);
  });
});
