/** What every directory route needs: the caller's directory and the public base URL. */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import type { AvailabilityCache } from '../../../domain/availability/summary-cache.js';
import type { DirectoryCaller } from '../../../domain/directory/visible.js';
import type { KeptReference } from '../../../domain/directory/kept-reference.js';
import { principalOf } from '../../../http/auth-guard.js';

export interface DirectoryDeps {
  config: Config;
  /** The primary: writes (insurance-mapping change requests) and the reads of a request that writes. */
  db: Db;
  /**
   * Directory reads: the read replica in production when there is one, else `db`
   * (docs/decisions/0020-read-replicas.md). Never given a write.
   */
  reads: Db;
  /** The application's memo of availability summaries for listings (src/domain/availability/summary-cache.ts). */
  availabilityCache?: AvailabilityCache;
  /** The application's kept reference pages (specialties, visit reasons, insurance plans; src/domain/directory/kept-reference.ts). */
  keptReference?: KeptReference;
}

/** The caller's directory: this environment, the token's developer (docs/api/directory.md#your-directory). */
export function callerOf(req: FastifyRequest, config: Config): DirectoryCaller {
  return { env: config.appEnv, developerId: principalOf(req).developerId };
}
