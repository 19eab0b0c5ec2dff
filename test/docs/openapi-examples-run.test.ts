/**
 * The request examples of `/openapi.json` work against a fresh sandbox (its demo directory, as
 * `npm start` creates it): every directory id they name exists and every example body is accepted
 * as written, except the values that cannot be known in advance, which the examples mark as
 * placeholders (`<CLIENT_ID>`, `<CLIENT_SECRET>`, `<APP_CLIENT_ID>`) or illustrate (an appointment id
 * you booked, a start time offered today): those, and only those, are filled in here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapSandbox } from '../../src/domain/demo/bootstrap.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken } from '../helpers/auth.js';
import { scaled } from '../helpers/scale.js';

type Json = Record<string, unknown>;
type Doc = { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> }; parameters?: { name: string; in: string }[] }>> };

describe('/openapi.json request examples run against a fresh sandbox', () => {
  let t: TestApp;
  let creds: NewDeveloper;
  let token: string;
  let doc: Doc;
  let dataDir: string;

  beforeAll(async () => {
    t = await testApp();
    dataDir = await mkdtemp(join(tmpdir(), 'carebook-examples-'));
    creds = (await bootstrapSandbox(t.db, { dataDir, publicBaseUrl: t.config.publicBaseUrl })).credentials!;
    token = await clientToken(t, creds);
    doc = (await t.app.inject({ url: '/openapi.json' })).json();
  }, scaled(120_000));
  afterAll(async () => {
    await t?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const example = (method: string, path: string): Json => {
    const op = doc.paths[path]![method]!;
    const media = Object.values(op.requestBody!.content)[0]!;
    return structuredClone(media.example) as Json;
  };
  const call = (method: 'POST' | 'PUT', url: string, payload: Json) => t.app.inject({ method, url, headers: bearer(token), payload });

  /** The first start time the availability endpoint offers for the booking example's provider-location. */
  async function offeredStart(body: { data: { provider_location_id: string; visit_reason_id: string; patient_type: string } }, skip = 0): Promise<string> {
    const q = new URLSearchParams({ provider_location_ids: body.data.provider_location_id, visit_reason_id: body.data.visit_reason_id, patient_type: body.data.patient_type });
    const res = await t.app.inject({ url: `/v1/provider_locations/availability?${q}`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    const slots = [...res.json().data[0].timeslots, res.json().data[0].first_availability].filter(Boolean) as { start_time: string }[];
    expect(slots.length, 'the example provider-location has availability').toBeGreaterThan(skip);
    return slots[skip]!.start_time;
  }

  it('booking, reschedule and cancel: directory ids as written, the start time and appointment id filled in', async () => {
    const book = example('post', '/v1/appointments') as { data: { provider_location_id: string; visit_reason_id: string; patient_type: string; start_time: string } };
    book.data.start_time = await offeredStart(book);
    const booked = await call('POST', '/v1/appointments', book as unknown as Json);
    expect(booked.statusCode, booked.body).toBe(200);
    const id = booked.json().data.appointment_id as string;

    const cancel = { ...example('post', '/v1/appointments/cancel'), appointment_id: id };
    const cancelled = await call('POST', '/v1/appointments/cancel', cancel);
    expect(cancelled.statusCode, cancelled.body).toBe(200);

    const again = await call('POST', '/v1/appointments', book as unknown as Json);
    expect(again.statusCode, again.body).toBe(200);
    const reschedule = { ...example('post', '/v1/appointments/reschedule'), appointment_id: again.json().data.appointment_id, start_time: await offeredStart(book, 1) };
    const moved = await call('POST', '/v1/appointments/reschedule', reschedule);
    expect([200, 409], moved.body).toContain(moved.statusCode); // 409 only if the evaluator has not confirmed the booking yet
  });

  it('calendar push, insurance-mapping change and the mock webhook work as written', async () => {
    const push = example('put', '/v1/providers/{provider_id}/calendar/timeslots') as { timeslots: { provider_id: string; start_time: string }[] };
    const slot = push.timeslots[0]!;
    const pushed = await call('PUT', `/v1/providers/${slot.provider_id}/calendar/timeslots?date=${slot.start_time.slice(0, 10)}`, push as unknown as Json);
    expect(pushed.statusCode, pushed.body).toBe(200);
    expect(pushed.json().errors.not_found_location_ids).toEqual([]);

    const booking = example('post', '/v1/appointments') as { data: { provider_location_id: string } };
    const mapping = await call('POST', `/v1/provider_locations/${encodeURIComponent(booking.data.provider_location_id)}/insurance_mappings`, example('post', '/v1/provider_locations/{provider_location_id}/insurance_mappings'));
    expect(mapping.statusCode, mapping.body).toBe(202);

    const mock = await call('POST', '/v1/webhook/mock-request', example('post', '/v1/webhook/mock-request'));
    expect(mock.statusCode, mock.body).toBe(200);
  });

  it('token requests: the placeholders are the only values to fill in', async () => {
    const tokenBody = example('post', '/auth/oauth/token');
    expect(tokenBody).toMatchObject({ client_id: '<CLIENT_ID>', client_secret: '<CLIENT_SECRET>' });
    const issued = await t.app.inject({
      method: 'POST',
      url: '/auth/oauth/token',
      payload: { ...tokenBody, client_id: creds.client_id, client_secret: creds.client_secret, audience: t.config.audience },
    });
    expect(issued.statusCode, issued.body).toBe(200);

    const anonymous = example('post', '/v1/token/anonymous-user');
    expect(anonymous).toEqual({ app_client_id: '<APP_CLIENT_ID>' });
    const anon = await call('POST', '/v1/token/anonymous-user', { app_client_id: creds.user_client_id });
    expect(anon.statusCode, anon.body).toBe(200);
  });

  it('every directory id an example names exists in the fresh sandbox', async () => {
    const text = JSON.stringify(doc.paths);
    const ids = new Set([...text.matchAll(/"((?:pr|lo|pc|sp|ip|ic|pt|fa)_[a-z0-9_]+)(?:\|(lo_[a-z0-9_]+))?"/g)].flatMap((m) => [m[1]!, ...(m[2] ? [m[2]] : [])]));
    expect(ids.size).toBeGreaterThan(5);
    const tables: Record<string, 'providers' | 'locations' | 'visit_reasons' | 'specialties' | 'insurance_plans' | 'insurance_carriers' | 'practices' | 'facilities'> = {
      pr: 'providers', lo: 'locations', pc: 'visit_reasons', sp: 'specialties', ip: 'insurance_plans', ic: 'insurance_carriers', pt: 'practices', fa: 'facilities',
    };
    for (const id of ids) {
      const table = tables[id.slice(0, 2)]!;
      const row = await t.db.selectFrom(table).select('id').where('id', '=', id).executeTakeFirst();
      expect(row, `${id} (${table}) exists in a fresh sandbox`).toBeDefined();
    }
  });
});
