/**
 * Webhook signatures (docs/api/webhooks.md#signature): `webhook-signature` = `v1:` + base64(HMAC-SHA256(key, timestamp
 * + "." + raw body)) where key is the base64-decoded webhook key; one signature per active key,
 * `;`-separated, while a key rotates. The signature covers exactly the bytes sent.
 */
import { createHmac } from 'node:crypto';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** True for a non-empty, canonical standard-base64 string (what a webhook key must be). */
export function isBase64Key(key: string): boolean {
  return key.length > 0 && key.length <= 1024 && BASE64.test(key) && Buffer.from(key, 'base64').length > 0;
}

/** One `v1:` signature per key, joined by `;`. */
export function signatureHeader(keysBase64: readonly string[], timestampSeconds: number, rawBody: string): string {
  return keysBase64
    .map((k) => `v1:${createHmac('sha256', Buffer.from(k, 'base64')).update(`${timestampSeconds}.${rawBody}`).digest('base64')}`)
    .join(';');
}
