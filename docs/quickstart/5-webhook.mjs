// 5. Receive a webhook and verify its signature against the raw body, then ask the sandbox to send one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

export function verify(rawBody, headers, keyBase64, toleranceSeconds = 300) {
  const timestamp = headers['webhook-timestamp'] ?? '';
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = createHmac('sha256', Buffer.from(keyBase64, 'base64')).update(`${timestamp}.${rawBody}`).digest();
  return (headers['webhook-signature'] ?? '').split(';').some((sig) => {
    const got = Buffer.from(sig.replace(/^v1:/, ''), 'base64');
    return sig.startsWith('v1:') && got.length === expected.length && timingSafeEqual(got, expected);
  });
}

export function startReceiver(port, keyBase64, onEvent) {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      if (!verify(raw, req.headers, keyBase64)) return res.writeHead(401).end();
      res.writeHead(204).end(); // answer fast, work afterwards
      onEvent(JSON.parse(raw));
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

export async function sendMockWebhook(baseUrl, token, webhookUrl, keyBase64) {
  const res = await fetch(`${baseUrl}/v1/webhook/mock-request`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ webhook_url: webhookUrl, webhook_key: keyBase64, appointment_update_type: 'cancelled' }),
  });
  if (!res.ok) throw new Error(`mock webhook: ${res.status} ${await res.text()}`);
  return res.json();
}
