/** Real tokens from the running test app's token endpoint. */
import type { NewDeveloper } from '../../src/domain/developers/create-developer.js';
import type { TestApp } from './app.js';

/** A client-credentials access token (interface.md §5.1); `scope` narrows the grant. */
export async function clientToken(t: TestApp, creds: NewDeveloper, scope?: string): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/auth/oauth/token',
    payload: {
      grant_type: 'client_credentials',
      client_id: creds.client_id,
      client_secret: creds.client_secret,
      audience: t.config.audience,
      ...(scope !== undefined ? { scope } : {}),
    },
  });
  if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
  return (res.json() as { access_token: string }).access_token;
}

export const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` });
