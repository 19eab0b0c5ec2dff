/**
 * First start of a sandbox (contracts.md §2): on an empty database, create a demo directory and a
 * demo developer whose directory it is, and write its credentials to `${DATA_DIR}/demo-credentials.json`
 * (mode 0600). Later starts change nothing but the sandbox fixtures, which are kept current.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../../db/database.js';
import { createDeveloper, type NewDeveloper } from '../developers/create-developer.js';
import { ensureSandboxFixtures } from '../directory/sandbox-fixtures.js';
import { generateDirectory } from '../directory/seed.js';
import { writeDirectory } from '../directory/write-directory.js';

export interface BootstrapResult {
  created: boolean;
  credentials: NewDeveloper | undefined;
  credentialsFile: string;
}

export const DEMO_PROVIDERS = 200;

export async function bootstrapSandbox(
  db: Db,
  opts: { dataDir: string; publicBaseUrl: string; demoProviders?: number },
): Promise<BootstrapResult> {
  const credentialsFile = join(opts.dataDir, 'demo-credentials.json');
  await db.transaction().execute((trx) => ensureSandboxFixtures(trx));
  const anyDeveloper = await db.selectFrom('developers').select('id').where('env', '=', 'sandbox').limit(1).executeTakeFirst();
  if (anyDeveloper) {
    const saved = await readFile(credentialsFile, 'utf8').then((s) => JSON.parse(s) as NewDeveloper).catch(() => undefined);
    return { created: false, credentials: saved, credentialsFile };
  }
  const creds = await createDeveloper(db, {
    env: 'sandbox',
    name: 'Demo developer',
    redirectUris: [`${opts.publicBaseUrl}/demo/callback`, 'http://127.0.0.1:3000/callback'],
  });
  const doc = generateDirectory(opts.demoProviders ?? DEMO_PROVIDERS, 1);
  await db.transaction().execute(async (trx) => {
    await writeDirectory(trx, 'sandbox', doc, { developerId: creds.developer_id });
    await ensureSandboxFixtures(trx);
  });
  // On PostgreSQL nothing else creates DATA_DIR (found by test/ops/scale-out.test.ts).
  await mkdir(opts.dataDir, { recursive: true });
  await writeFile(credentialsFile, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  await chmod(credentialsFile, 0o600);
  return { created: true, credentials: creds, credentialsFile };
}
