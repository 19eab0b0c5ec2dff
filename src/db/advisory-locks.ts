/**
 * Advisory lock ids, for the transaction-level locks that make concurrent processes agree (the
 * signing keys, src/auth/signing-keys.ts; the demo bootstrap, src/domain/demo/bootstrap.ts).
 * PostgreSQL's advisory locks belong to the whole database, while a deployment (or a test file) owns
 * one schema of it; so every lock id is the hash of its name together with `current_schema()`, and
 * two deployments sharing a database never hold each other's locks. Background passes hold leases
 * instead (src/db/leases.ts).
 */
import { sql, type RawBuilder } from 'kysely';

/** The advisory lock id of `name` in the current schema, for `pg_advisory_*lock(...)`. */
export function schemaLockId(name: string): RawBuilder<number> {
  return sql<number>`hashtext(${name} || '.' || current_schema())`;
}
