/**
 * Where webhooks may go (issue #5 §3–4). Checked on the address actually connected to, at send time
 * (a DNS answer that changes after registration cannot smuggle a request inside the network):
 * - never link-local (169.254.0.0/16 — cloud metadata — and fe80::/10), unspecified or multicast;
 * - in production also never loopback, private or unique-local addresses, and only https,
 *   unless `ALLOW_PRIVATE_WEBHOOK_TARGETS=true` (local testing);
 * - the sandbox admits http and private addresses so that developers can test against local receivers.
 */
import { isIP } from 'node:net';

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export class TargetRefused extends Error {}

export function policyFor(env: 'sandbox' | 'production', allowPrivateOverride: boolean): TargetPolicy {
  const open = env === 'sandbox' || allowPrivateOverride;
  return { allowHttp: open, allowPrivate: open };
}

function v4(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** Classifies an IP address: 'never' (link-local, metadata, unspecified, multicast), 'private', or 'public'. */
export function classifyAddress(ip: string): 'never' | 'private' | 'public' {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return classifyAddress(mapped[1]!);
  // The same IPv4-mapped address in hex form, as the URL parser writes it (`[::ffff:a9fe:a9fe]` is
  // 169.254.169.254; found by test/security/owasp.test.ts).
  const mappedHex = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (mappedHex) {
    const hi = parseInt(mappedHex[1]!, 16);
    const lo = parseInt(mappedHex[2]!, 16);
    return classifyAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  }
  if (isIP(ip) === 4) {
    const [a, b] = v4(ip) as [number, number];
    if (a === 169 && b === 254) return 'never';
    if (a === 0 || a >= 224) return 'never';
    if (a === 127 || a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127)) return 'private';
    return 'public';
  }
  const lower = ip.toLowerCase();
  if (lower === '::' || lower.startsWith('ff')) return 'never';
  if (/^fe[89ab]/.test(lower)) return 'never';
  if (lower === '::1' || /^f[cd]/.test(lower)) return 'private';
  return 'public';
}

/** Throws `TargetRefused` when the address may not be connected to under `policy`. */
export function checkAddress(ip: string, policy: TargetPolicy): void {
  const kind = classifyAddress(ip);
  if (kind === 'never') throw new TargetRefused(`address ${ip} is not allowed for webhooks`);
  if (kind === 'private' && !policy.allowPrivate) throw new TargetRefused(`private or loopback address ${ip} is not allowed for webhooks`);
}

/** Checks the URL's shape (scheme, no credentials); the address is checked at connect time. */
export function checkUrl(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new TargetRefused(policy.allowHttp ? 'must be an http or https URL' : 'must be an https URL');
  }
  if (url.username || url.password) throw new TargetRefused('must not contain credentials');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) checkAddress(host, policy);
  return url;
}
