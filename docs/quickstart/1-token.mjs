// 1. A machine-to-machine access token (client credentials). Cache it: it lives 60 minutes.
export async function getToken(baseUrl, clientId, clientSecret) {
  const res = await fetch(`${baseUrl}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, audience: `${baseUrl}/` }),
  });
  if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
  const { access_token } = await res.json();
  return access_token;
}
