/**
 * Idempotency-Key never keeps or replays a secret or a token (docs/decisions/0010): client secret
 * rotation and anonymous tokens store only their status, a repeat of a completed one is 409 without
 * the secret, and a repeat sent with another credential is never answered with the first answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { CLIENT_CREDENTIALS_SCOPES } from '../../src/domain/credentials/scopes.js';
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import { hashToken } from '../../src/lib/secrets.js';
import { up as purgeKeptSecrets } from '../../src/db/migrations/0011_idempotency_withheld_answers.js';
import { newDeveloper, testApp, type TestApp } from '../helpers/app.js';
import { bearer, clientToken, userToken } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';

describe(`Idempotency-Key and secrets (${engineName})`, () => {
  let t: TestApp;
  let dev: NewDeveloper;
  beforeAll(async () => {
    t = await testApp();
    dev = await newDeveloper(t, 'Secretive');
  });
  afterAll(async () => t.close());

  const post = (url: string, token: string, payload: object, key: string) =>
    t.app.inject({ method: 'POST', url, headers: { ...bearer(token), 'idempotency-key': key }, payload });
  /** Every kept answer's text, to search for secrets. */
  const keptText = async () =>
    (await sql<{ t: string | null }>`SELECT response_body::text AS t FROM idempotency_keys`.execute(t.db)).rows.map((r) => r.t ?? '').join('\n');

  it('a repeated secret rotation is 409 and never returns the secret, even from a token of the old secret', async () => {
    const oldToken = await clientToken(t, dev);
    const first = await post('/v1/credentials/rotate', oldToken, { application_client_id: dev.client_id }, 'rotate-1');
    expect(first.statusCode).toBe(200);
    const secret = first.json().data.client_secret as string;
    expect(secret).toEqual(expect.any(String));
    const again = await post('/v1/credentials/rotate', oldToken, { application_client_id: dev.client_id }, 'rotate-1');
    expect(again.statusCode).toBe(409);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body).not.toContain(secret);
    expect(again.json()).toMatchObject({ error_type: 'invalid_request', errors: [{ field: 'Idempotency-Key' }] });
    expect(await keptText()).not.toContain(secret);
    // The new secret is the one that works; the repeat did not rotate again.
    dev = { ...dev, client_secret: secret };
    expect(await clientToken(t, dev)).toEqual(expect.any(String));
  });

  it('a repeated anonymous-token request is 409 and no token is kept', async () => {
    const machine = await clientToken(t, dev);
    const first = await post('/v1/token/anonymous-user', machine, { app_client_id: dev.user_client_id }, 'anon-1');
    expect(first.statusCode).toBe(200);
    const token = first.json().data.access_token as string;
    const again = await post('/v1/token/anonymous-user', machine, { app_client_id: dev.user_client_id }, 'anon-1');
    expect(again.statusCode).toBe(409);
    expect(again.body).not.toContain(token);
    expect(await keptText()).not.toContain(token);
    const rows = await t.db.selectFrom('idempotency_keys').select(['path', 'status_code', 'response_body']).where('key', '=', 'anon-1').execute();
    expect(rows).toEqual([{ path: '/v1/token/anonymous-user', status_code: 200, response_body: null }]);
  });

  it('a repeat from another credential of the same developer is a new request, never a replay', async () => {
    // A second machine-to-machine credential of the same developer (as a developer with two apps has).
    const second = { ...dev, client_id: 'cl_secondcredential', client_secret: 'second-credential-secret-0123456789' };
    await t.db
      .insertInto('oauth_clients')
      .values({
        client_id: second.client_id, env: 'sandbox', developer_id: dev.developer_id, kind: 'confidential',
        secret_hash: hashToken(second.client_secret), scopes: [...CLIENT_CREDENTIALS_SCOPES],
      })
      .execute();
    const machine = await clientToken(t, dev);
    const other = await clientToken(t, second);
    const user = await userToken(t, dev, { email: 'idem-user@example.com', password: 'idem-password-1' });
    const missing = { appointment_id: '00000000-0000-4000-8000-000000000000' };
    expect((await post('/v1/appointments/cancel', machine, missing, 'shared-key')).statusCode).toBe(404);
    expect((await post('/v1/appointments/cancel', machine, missing, 'shared-key')).headers['idempotent-replayed']).toBe('true');
    for (const token of [other, user]) {
      const res = await post('/v1/appointments/cancel', token, missing, 'shared-key');
      expect(res.statusCode).toBe(404);
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
  });

  it('the migration erases secrets kept before this change', async () => {
    await t.db
      .insertInto('idempotency_keys')
      .values({
        env: 'sandbox', developer_id: dev.developer_id, principal: 'client', key: 'legacy', method: 'POST', path: '/v1/credentials/rotate',
        request_hash: 'x', status_code: 200, response_body: sql`${JSON.stringify({ data: { client_secret: 'legacy-secret-value' } })}::jsonb`,
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
    expect(await keptText()).toContain('legacy-secret-value');
    await purgeKeptSecrets(t.db as never);
    expect(await keptText()).not.toContain('legacy-secret-value');
  });
});
