/**
 * The real service for the client's tests: the root repository's app over a fresh database, the
 * sandbox bootstrap (demo directory and demo developer), listening on 127.0.0.1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewDeveloper } from '../../../src/domain/developers/create-developer.js';
import { bootstrapSandbox } from '../../../src/domain/demo/bootstrap.js';
import { testApp, type TestApp } from '../../../test/helpers/app.js';

export interface Service {
  t: TestApp;
  baseUrl: string;
  creds: NewDeveloper;
  close(): Promise<void>;
}

/** Starts the service with a small demo directory (`providers` providers). */
export async function startService(opts: { providers?: number; env?: Record<string, string> } = {}): Promise<Service> {
  const t = await testApp(opts.env);
  const dataDir = await mkdtemp(join(tmpdir(), 'carebook-client-'));
  const boot = await bootstrapSandbox(t.db, { dataDir, publicBaseUrl: t.config.publicBaseUrl, demoProviders: opts.providers ?? 30 });
  const baseUrl = await t.listen();
  return {
    t,
    baseUrl,
    creds: boot.credentials!,
    async close() {
      await t.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
