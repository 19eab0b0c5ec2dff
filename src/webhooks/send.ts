/**
 * Sends one webhook request: POST of the exact bytes signed, 5 s timeout (docs/api/webhooks.md#delivery-and-retries), the
 * target policy enforced on every address the host name resolves to, redirects not followed.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { checkAddress, checkUrl, isPrivateAddress, TargetRefused, type TargetPolicy } from './target-policy.js';

export const WEBHOOK_TIMEOUT_MS = 5000;
/** Most bytes of the receiver's answer kept (docs/console.md, "Webhooks"). */
export const RESPONSE_EXCERPT_MAX_BYTES = 256;

export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  /** Transport error, timeout or refused target; never response content. */
  error: string | null;
  /**
   * True when the target policy refused the URL or its resolved address (issue #5 §3): nothing was sent,
   * and sending again cannot succeed, so it is never retried.
   */
  refused: boolean;
  /** True when the receiver was on a private or loopback address: what it answered is never reported to a caller. */
  privateTarget: boolean;
  /**
   * The first bytes of the receiver's answer as text: at most {@link RESPONSE_EXCERPT_MAX_BYTES} bytes
   * of UTF-8, whole characters only, NUL replaced; null when no answer came.
   */
  excerpt: string | null;
}

/**
 * The kept start of an answer: the first {@link RESPONSE_EXCERPT_MAX_BYTES} bytes decoded as UTF-8,
 * then whole characters dropped from the end until its UTF-8 form fits again (a character cut in half
 * or an invalid byte decodes to U+FFFD, which is longer than the byte it replaces). NUL, which a
 * database text column cannot hold, becomes U+FFFD too.
 */
export function responseExcerpt(bytes: Buffer): string {
  let text = bytes.subarray(0, RESPONSE_EXCERPT_MAX_BYTES).toString('utf8').replaceAll('\u0000', '\ufffd');
  while (Buffer.byteLength(text) > RESPONSE_EXCERPT_MAX_BYTES) text = Array.from(text).slice(0, -1).join('');
  return text;
}

function guardedLookup(policy: TargetPolicy, onPrivate: () => void): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      try {
        list.forEach((a) => checkAddress(a.address, policy));
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, '', 0);
      }
      if (list.some((a) => isPrivateAddress(a.address))) onPrivate();
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** POSTs `body` with `headers` to `url`; resolves (never rejects) with the outcome. */
export function sendWebhook(url: string, body: string, headers: Record<string, string>, policy: TargetPolicy, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<SendResult> {
  const started = performance.now();
  let privateTarget = false;
  const done = (statusCode: number | null, error: string | null, refused = false, excerpt: string | null = null): SendResult => ({
    statusCode, error, refused, privateTarget, excerpt, latencyMs: Math.round(performance.now() - started),
  });
  let target: URL;
  try {
    target = checkUrl(url, policy);
  } catch (e) {
    return Promise.resolve(done(null, e instanceof TargetRefused ? e.message : 'invalid URL', true));
  }
  // A literal address is connected to without a lookup: classify it here.
  const literal = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal)) privateTarget = isPrivateAddress(literal);
  const mod = target.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = mod.request(
      target,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Carebook-Webhooks/1', ...headers },
        lookup: guardedLookup(policy, () => (privateTarget = true)),
        timeout: timeoutMs,
      },
      (res) => {
        // Only the first bytes are kept; the rest is read and dropped.
        const head: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < RESPONSE_EXCERPT_MAX_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_MAX_BYTES - kept);
            head.push(part);
            kept += part.length;
          }
        });
        const excerpt = () => responseExcerpt(Buffer.concat(head));
        res.on('end', () => resolve(done(res.statusCode ?? null, null, false, excerpt())));
        res.on('error', () => resolve(done(res.statusCode ?? null, null, false, excerpt())));
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on('error', (e) => resolve(e instanceof TargetRefused ? done(null, e.message, true) : done(null, e.message.slice(0, 200))));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}

/** docs/api/webhooks.md#delivery-and-retries: retry on a transport error, timeout, 408, 429 or 5xx; never a refused target (issue #5 §3). */
export function isRetryable(r: SendResult): boolean {
  if (r.refused) return false;
  if (r.statusCode === null) return true;
  return r.statusCode === 408 || r.statusCode === 429 || r.statusCode >= 500;
}
