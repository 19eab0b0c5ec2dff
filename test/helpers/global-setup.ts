/**
 * Builds one migrated PGlite data directory per test run and dumps it to a file; every test loads a
 * copy (a fresh PGlite directory costs seconds and hundreds of MB, a copy costs a fraction).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';

let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    project.provide("pgliteTemplate", "");
    return;
  }
  dir = await mkdtemp(join(tmpdir(), 'carebook-template-'));
  const handle = await openDatabase({ inMemory: true });
  await migrateToLatest(handle.db);
  const dump = await handle.pglite!.dumpDataDir('none');
  const file = join(dir, 'template.tar');
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  await handle.close();
  project.provide('pgliteTemplate', file);
}

export async function teardown(): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
  }
}
