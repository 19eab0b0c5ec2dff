/**
 * The webhook delivery job: each pass claims and sends up to `BATCH` due outbox events of this
 * process's environment (`createWebhookWorker(...).runOnce`, src/webhooks/worker.ts), every
 * `WORKER_POLL_MS`, at once again after a full batch.
 */
import { isLocalSandbox } from '../config.js';
import { BATCH, createWebhookWorker } from '../webhooks/worker.js';
import type { JobDeps } from './job-deps.js';
import type { Job } from './loop.js';

/** The webhook delivery job of `deps.config.appEnv`. */
export function webhookDeliveryJob({ db, config }: JobDeps): Job {
  const worker = createWebhookWorker(db, {
    env: config.appEnv,
    allowPrivateTargets: config.allowPrivateWebhookTargets,
    reflectPrivateAnswers: isLocalSandbox(config.appEnv, config.host),
    baseDelayMs: config.webhookRetryBaseMs,
  });
  return {
    name: 'webhook-delivery',
    title: 'webhook worker',
    intervalMs: config.workerPollMs,
    batch: BATCH,
    pass: () => worker.runOnce(),
  };
}
