/**
 * Answers that carry a secret or a token are never kept for Idempotency-Key replays
 * (docs/decisions/0010-idempotency-never-keeps-secrets.md). Kept answers of the two
 * routes whose answers carry one (client secret rotation, anonymous tokens) are erased here; from
 * now on `src/http/idempotency.ts` stores only their status. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE idempotency_keys SET response_body = NULL WHERE path IN ('/v1/credentials/rotate', '/v1/token/anonymous-user')`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to restore: the erased answers held secrets.
}
