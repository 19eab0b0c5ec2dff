/**
 * Hashing of secrets.
 * - Passwords (low entropy, chosen by people): argon2id, memory-hard (RFC 9106).
 * - Machine secrets, codes and tokens (256-bit random): SHA-256. A memory-hard hash adds nothing
 *   against guessing a 256-bit value and would cost ~50 ms and 19 MiB on every token request.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';

/** argon2id per OWASP's password storage guidance (m=19 MiB, t=2, p=1). */
export async function hashPassword(password: string): Promise<string> {
  return argon2Hash(password, { memoryCost: 19456, timeCost: 2, parallelism: 1 });
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2Verify(hash, password);
  } catch {
    return false;
  }
}

/** SHA-256 hex of a high-entropy token; store this, never the token. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of a presented token with a stored `hashToken` value. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
