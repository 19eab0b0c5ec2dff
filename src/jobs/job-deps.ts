/** What every job factory is given (src/jobs/registry.ts). */
import type { Config } from '../config.js';
import type { Db, DatabaseHandle } from '../db/database.js';

export interface JobDeps {
  db: Db;
  config: Config;
  /** The database engine: the table-maintenance job runs only where autovacuum does not. */
  engine: DatabaseHandle['engine'];
}
