/**
 * Advisory lock ids (docs/architecture.md, "Background jobs"). PostgreSQL's advisory locks belong to
 * the whole database, while a deployment (or a test file) owns one schema of it; so every lock id is
 * the hash of its name together with `current_schema()`, and two deployments sharing a database never
 * hold each other's locks.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';

/** The advisory lock id of `name` in the current schema, for `pg_advisory_*lock(...)`. */
export function schemaLockId(name: string): RawBuilder<number> {
  return sql<number>`hashtext(${name} || '.' || current_schema())`;
}

/**
 * Runs `work` on one connection of `db` kept for it, holding the session-level advisory lock `name`
 * (`pg_try_advisory_lock`, unlocked after `work` whatever happened); resolves `undefined` without
 * running it when another session holds the lock. For background passes that must not run twice at
 * once across processes and hold no transaction (src/db/table-maintenance.ts, the summary refresh).
 * On PGlite, one session, the lock is always taken (it nests).
 */
export async function withSessionLock<DB, T>(db: Kysely<DB>, name: string, work: (conn: Kysely<DB>) => Promise<T>): Promise<T | undefined> {
  return db.connection().execute(async (conn) => {
    const lock = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock(${schemaLockId(name)}) AS locked`.execute(conn);
    if (lock.rows[0]?.locked !== true) return undefined;
    try {
      return await work(conn);
    } finally {
      await sql`SELECT pg_advisory_unlock(${schemaLockId(name)})`.execute(conn);
    }
  });
}
