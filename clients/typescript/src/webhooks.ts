/**
 * Verifying webhook deliveries (docs/webhooks.md): `webhook-signature` is `v1:` + base64(HMAC-SHA256(
 * base64-decoded key, `webhook-timestamp` + "." + raw body)); several signatures are separated by `;`
 * while a key is being rotated. Uses Web Crypto, whose HMAC verify compares in constant time.
 */

/** The body of a delivery. */
export interface WebhookEvent {
  event_type: string;
  webhook_timestamp: string;
  data: {
    data_type: string;
    appointment_data: {
      appointment_id: string;
      appointment_updated_timestamp?: string;
      appointment_update_type?: 'created' | 'updated' | 'cancelled';
      changed_attributes?: { attribute_path: string }[];
    };
  };
}

/** Why a delivery was refused. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The request body exactly as received, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** The request headers (a `Headers` or Node's `IncomingHttpHeaders`). */
  headers: HeaderBag;
  /** The receiver's key (base64), or several while rotating keys: any one may match. */
  key: string | string[];
  /** Oldest (and furthest future) timestamp accepted, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Current time in milliseconds; replaceable in tests. */
  now?: number;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

function fromBase64(s: string): Uint8Array | undefined {
  try {
    const bin = atob(s);
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Checks a delivery's timestamp and signatures and returns its parsed body; throws a
 * `WebhookVerificationError` when the timestamp is missing or outside the tolerance, or when no
 * `v1:` signature matches any key.
 */
export async function verifyWebhook(opts: VerifyWebhookOptions): Promise<WebhookEvent> {
  const timestamp = header(opts.headers, 'webhook-timestamp');
  if (!timestamp || !/^\d+$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed webhook-timestamp');
  const now = (opts.now ?? Date.now()) / 1000;
  if (Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook-timestamp outside the tolerance');
  const signatures = (header(opts.headers, 'webhook-signature') ?? '')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('v1:'))
    .map((s) => fromBase64(s.slice(3)))
    .filter((s): s is Uint8Array => s !== undefined);
  if (!signatures.length) throw new WebhookVerificationError('no v1 signature');
  const body = typeof opts.rawBody === 'string' ? new TextEncoder().encode(opts.rawBody) : opts.rawBody;
  const signed = new Uint8Array([...new TextEncoder().encode(`${timestamp}.`), ...body]);
  for (const key of [opts.key].flat()) {
    const keyBytes = fromBase64(key);
    if (!keyBytes) continue;
    const cryptoKey = await crypto.subtle.importKey('raw', keyBytes as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const sig of signatures) {
      if (await crypto.subtle.verify('HMAC', cryptoKey, sig as Uint8Array<ArrayBuffer>, signed)) {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
      }
    }
  }
  throw new WebhookVerificationError('no signature matches');
}
