/**
 * The directory and reference operations (issue #4; interface.md §4.8–4.14, §4.16; contracts.md §4),
 * and, when this process runs background work, the insurance-mapping job (started right after each
 * accepted request, and every few seconds).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AvailabilityCache } from '../../../domain/directory/availability-cache.js';
import { startInsuranceMappingWorker } from '../../../domain/directory/insurance-mappings.js';
import { loggableError } from '../../../lib/loggable-error.js';
import type { DirectoryDeps } from './context.js';
import { facilityRoutes } from './facilities.js';
import { insuranceMappingRoutes } from './insurance-mappings.js';
import { insurancePlanRoutes } from './insurance-plans.js';
import { providerRoutes } from './providers.js';
import { referenceRoutes } from './reference.js';
import { schedulableEntityRoutes } from './schedulable-entities.js';

export const directoryRoutes: FastifyPluginAsyncTypebox<DirectoryDeps & { runInsuranceMappingJob: boolean }> = async (app, deps) => {
  const { config, db } = deps;
  const worker = deps.runInsuranceMappingJob
    ? startInsuranceMappingWorker(db, config.appEnv, {
        onError: (e) => app.log.error({ err: loggableError(e) }, 'insurance mapping job failed'),
      })
    : undefined;
  if (worker) app.addHook('onClose', async () => worker.stop());

  const base = { config, db };
  // Availability summaries in listings may be up to a minute old (availability-cache.ts).
  const listing = { ...base, availabilityCache: deps.availabilityCache ?? new AvailabilityCache() };
  await app.register(referenceRoutes, base);
  await app.register(insurancePlanRoutes, base);
  await app.register(schedulableEntityRoutes, listing);
  await app.register(providerRoutes, listing);
  await app.register(insuranceMappingRoutes, { ...base, kickJob: () => worker?.kick() });
  await app.register(facilityRoutes, base);
};
