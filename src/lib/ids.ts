import { randomBytes, randomUUID } from 'node:crypto';

/** A random id with a type prefix, e.g. `dv_3k9…` (URL-safe, 96 bits). */
export function prefixedId(prefix: string, bytes = 12): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

/** A UUID (appointment ids are UUID-style strings, docs/api/conventions.md#identifiers). */
export function uuid(): string {
  return randomUUID();
}

/** A high-entropy secret (client secrets, codes, refresh tokens): 256 bits, base64url. */
export function secretToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
