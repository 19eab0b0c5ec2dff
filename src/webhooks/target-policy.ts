/**
 * The one policy for every outbound request the service makes (webhook deliveries, the sandbox's
 * mock delivery, setting a webhook URL): docs/webhooks.md, "Where webhooks may go";
 * docs/decisions/0005-one-outbound-address-policy.md. Addresses are classified with `ipaddr.js`:
 *
 * - **never** (every environment, no override): unspecified, broadcast, multicast, link-local
 *   (169.254.0.0/16 and fe80::/10, cloud metadata among them), reserved and documentation ranges,
 *   and the cloud metadata addresses that sit in other ranges (`fd00:ec2::254`, `100.100.100.200`,
 *   `192.0.0.192`);
 * - **private**: loopback, RFC 1918, carrier-grade NAT (100.64.0.0/10), unique-local (fc00::/7):
 *   allowed only where the operator allows private targets (`ALLOW_PRIVATE_WEBHOOK_TARGETS`);
 * - **public**: everything else.
 *
 * An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible `::a.b.c.d`, NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, SIIT, 6to4, Teredo) is classified by the IPv4 address it leads
 * to. Host names written as numbers (`2130706433`, `0177.0.0.1`, `0x7f000001`) are normalised by the
 * WHATWG URL parser before the check, and the check runs again on every address a name resolves to,
 * at connect time, so a DNS answer cannot smuggle a request inside the network.
 */
import ipaddr from 'ipaddr.js';

export interface TargetPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

export class TargetRefused extends Error {}

/**
 * The policy of an environment. `allowPrivate` is the operator's setting (`ALLOW_PRIVATE_WEBHOOK_TARGETS`,
 * src/config.ts): private addresses only when it is true. Plain http is allowed in the sandbox, and
 * in production only with private targets allowed (local testing).
 */
export function policyFor(env: 'sandbox' | 'production', allowPrivate: boolean): TargetPolicy {
  return { allowHttp: env === 'sandbox' || allowPrivate, allowPrivate };
}

/** Cloud metadata services outside the link-local ranges (AWS IPv6, Alibaba, Oracle). */
const METADATA = new Set(['fd00:ec2::254', '100.100.100.200', '192.0.0.192']);
const NEVER_RANGES = new Set(['unspecified', 'broadcast', 'multicast', 'linkLocal', 'reserved', 'benchmarking', 'discard', 'deprecatedSiteLocal', 'amt', 'as112', 'as112v6', 'deprecatedOrchid', 'orchid2', 'droneRemoteIdProtocolEntityTags', 'segmentRouting']);
const PRIVATE_RANGES = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** The IPv4 address an IPv6 address leads to, when it embeds one. */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const b = a.toByteArray();
  const v4 = (o: number) => new ipaddr.IPv4(b.slice(o, o + 4));
  switch (a.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return v4(12);
    case 'rfc6052':
      // 64:ff9b::/96 carries the IPv4 address in its last 32 bits; 64:ff9b:1::/48 (local NAT64,
      // RFC 8215) is refused whole by the caller as private.
      return a.parts[2] === 0 ? v4(12) : undefined;
    case '6to4':
      return v4(2);
    case 'teredo':
      return new ipaddr.IPv4(b.slice(12, 16).map((x) => x ^ 0xff));
    default:
      // IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): ::a.b.c.d, but not :: and ::1.
      if (a.match(IPV4_COMPATIBLE) && a.range() === 'unicast') return v4(12);
      return undefined;
  }
}

/** Classifies an IP address: 'never', 'private' or 'public' (see the module comment). */
export function classifyAddress(ip: string): 'never' | 'private' | 'public' {
  if (!ipaddr.isValid(ip)) return 'never';
  const parsed = ipaddr.parse(ip);
  if (METADATA.has(parsed.toNormalizedString()) || METADATA.has(parsed.toString())) return 'never';
  if (parsed.kind() === 'ipv6') {
    const inner = embeddedIPv4(parsed as ipaddr.IPv6);
    if (inner) return classifyAddress(inner.toString());
    if (parsed.range() === 'rfc6052') return 'private';
  }
  const range = parsed.range();
  if (NEVER_RANGES.has(range)) return 'never';
  if (PRIVATE_RANGES.has(range)) return 'private';
  return 'public';
}

/** Throws `TargetRefused` when the address may not be connected to under `policy`. */
export function checkAddress(ip: string, policy: TargetPolicy): void {
  const kind = classifyAddress(ip);
  if (kind === 'never') throw new TargetRefused('this address is never allowed as a webhook target');
  if (kind === 'private' && !policy.allowPrivate) throw new TargetRefused('private or loopback addresses are not allowed as webhook targets here');
}

/** Checks the URL's shape (scheme, no credentials) and a literal address; a name's addresses are checked at connect time. */
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
  if (ipaddr.isValid(host)) checkAddress(host, policy);
  return url;
}

/** Whether an address is private (loopback, RFC 1918, …): such a receiver's answer is never reported back. */
export function isPrivateAddress(ip: string): boolean {
  return classifyAddress(ip) !== 'public';
}
