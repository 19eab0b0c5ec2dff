/** The operator's per-developer rate-limit override (docs/api/conventions.md#rate-limits); null restores the default. */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';

export class UnknownDeveloperError extends Error {}

export async function setDeveloperRateLimit(db: Db, env: Env, developerId: string, perMinute: number | null): Promise<void> {
  const res = await db.updateTable('developers').set({ rate_limit_per_minute: perMinute }).where('id', '=', developerId).where('env', '=', env).executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0) throw new UnknownDeveloperError(`no developer ${developerId} in ${env}`);
}
