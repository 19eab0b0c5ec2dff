/**
 * The directory and reference operations (issue #4; docs/api/directory.md, docs/api/README.md#operations).
 * `kickInsuranceMappings` asks this process's insurance-mapping job (if it runs one) for a pass right
 * after a change request is accepted.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AvailabilityCache } from '../../../domain/availability/summary-cache.js';
import type { DirectoryDeps } from './context.js';
import { KeptReference } from '../../../domain/directory/kept-reference.js';
import { facilityRoutes } from './facilities.js';
import { insuranceMappingRoutes } from './insurance-mappings.js';
import { insurancePlanRoutes } from './insurance-plans.js';
import { providerRoutes } from './providers.js';
import { referenceRoutes } from './reference.js';
import { schedulableEntityRoutes } from './schedulable-entities.js';

export const directoryRoutes: FastifyPluginAsyncTypebox<DirectoryDeps & { kickInsuranceMappings: () => void }> = async (app, deps) => {
  const { config, db, reads } = deps;

  // Every GET below reads through `reads` (the replica when there is one); the one write, the
  // insurance-mapping change request, is the only route that uses `db` (docs/decisions/0020-read-replicas.md).
  // Reference pages and specialty names kept while the directory version holds (src/domain/directory/kept-reference.ts).
  const base = { config, db, reads, keptReference: deps.keptReference ?? new KeptReference() };
  // Availability summaries in listings may be up to a minute old (src/domain/availability/summary-cache.ts).
  const listing = { ...base, availabilityCache: deps.availabilityCache ?? new AvailabilityCache() };
  await app.register(referenceRoutes, base);
  await app.register(insurancePlanRoutes, base);
  await app.register(schedulableEntityRoutes, listing);
  await app.register(providerRoutes, listing);
  await app.register(insuranceMappingRoutes, { ...base, kickJob: deps.kickInsuranceMappings });
  await app.register(facilityRoutes, base);
};
