/**
 * The production deployment's own database, opened for one production grant by a sandbox
 * deployment or the CLI (docs/console.md, "Production"; `PRODUCTION_DATABASE_URL`). Grants are rare,
 * so a connection is opened for each and closed after it; the production deployment migrates its
 * own database, this never does.
 */
import type { Config } from '../config/config-type.js';
import { openDatabase } from './database.js';
import type { Db } from './database.js';

/**
 * Runs `fn` with the production target `PRODUCTION_DATABASE_URL` names (its database and its
 * console's address), or with undefined when it is unset (the grant then writes into this database).
 */
export async function withProductionTarget<T>(
  config: Pick<Config, 'productionDatabaseUrl' | 'productionPublicBaseUrl' | 'preparedStatements'>,
  fn: (target: { db: Db; consoleUrl: string | undefined } | undefined) => Promise<T>,
): Promise<T> {
  if (!config.productionDatabaseUrl) return fn(undefined);
  const handle = await openDatabase({ databaseUrl: config.productionDatabaseUrl, poolSize: 1, preparedStatements: config.preparedStatements });
  try {
    return await fn({ db: handle.db, consoleUrl: config.productionPublicBaseUrl ? `${config.productionPublicBaseUrl}/console` : undefined });
  } finally {
    await handle.close();
  }
}
