/**
 * The insurance-mapping job: each pass applies up to a batch of pending change requests of this
 * process's environment (`applyPendingInsuranceMappings`, src/domain/directory/insurance-mappings.ts),
 * every 5 s (the first pass 5 s after the start), at once again after a full batch, and at once when
 * the API of this process accepts a request (the route's `kick`).
 */
import { applyPendingInsuranceMappings } from '../domain/directory/insurance-mappings.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/** Pause (ms) between passes. */
export const INSURANCE_MAPPINGS_INTERVAL_MS = 5_000;
/** Requests claimed per pass. */
export const INSURANCE_MAPPINGS_BATCH = 100;

/** The insurance-mapping job of `deps.config.appEnv`. */
export function insuranceMappingsJob({ db, config }: JobDeps): Job {
  return {
    name: 'insurance-mappings',
    title: 'insurance mapping job',
    intervalMs: INSURANCE_MAPPINGS_INTERVAL_MS,
    firstPassAfterMs: INSURANCE_MAPPINGS_INTERVAL_MS,
    batch: INSURANCE_MAPPINGS_BATCH,
    pass: () => applyPendingInsuranceMappings(db, config.appEnv, INSURANCE_MAPPINGS_BATCH),
  };
}
