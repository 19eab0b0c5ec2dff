/**
 * Transactions of the booking paths: a serialization failure (40001) or deadlock (40P01) is retried
 * inside the service with jittered backoff, never surfaced; a no-overlap violation (23P01) means the
 * time is taken and becomes a `conflict`.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { conflict } from '../errors.js';

const RETRYABLE = new Set(['40001', '40P01']);

export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Runs `fn` in a transaction, retrying serialization failures and deadlocks (up to `attempts`). */
export async function inTransaction<T>(db: Kysely<Database>, fn: (trx: Transaction<Database>) => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await db.transaction().execute(fn);
    } catch (e) {
      if (!RETRYABLE.has(sqlState(e) ?? '') || i >= attempts) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * 2 ** Math.min(i, 5)));
    }
  }
}

/** Runs one atomic statement (or any `fn`), retrying serialization failures and deadlocks. */
export async function retrying<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (!RETRYABLE.has(sqlState(e) ?? '') || i >= attempts) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 10 * 2 ** Math.min(i, 5)));
    }
  }
}

/** Maps a no-overlap violation to a `conflict` with `message`; rethrows anything else. */
export function slotTaken(e: unknown, message: string, field: string): never {
  if (sqlState(e) === '23P01') throw conflict(message, field);
  throw e;
}
