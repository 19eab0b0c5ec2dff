/**
 * PKCE (RFC 7636) with the S256 method only (docs/api/auth.md#authorization-code-with-pkce; RFC 9700 §2.1.1: `plain` is not
 * supported).
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** `code_verifier` syntax, RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 `code_challenge` is the base64url (no padding) of a SHA-256 digest: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export function isValidVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

export function isValidS256Challenge(challenge: string): boolean {
  return S256_CHALLENGE.test(challenge);
}

/** `BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))`, RFC 7636 §4.2. */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 §4.6: does the verifier hash to the stored challenge? Compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isValidVerifier(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
