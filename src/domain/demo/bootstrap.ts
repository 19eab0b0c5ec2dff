/**
 * First start of a sandbox (docs/api/sandbox.md#demo-developer): on an empty database, create a demo directory and a
 * demo developer whose directory it is, and write its credentials to `${DATA_DIR}/demo-credentials.json`
 * (mode 0600). Later starts change nothing but the sandbox fixtures, which are kept current.
 *
 * The developer and its directory are written in one transaction, and the credentials file is
 * written (to a temporary file, synced, then renamed into place) before that transaction commits.
 * A crash or failure at any point leaves either nothing (the next start creates the demo again and
 * overwrites any file left over) or the complete demo with its secret on disk, never a developer
 * whose secret is lost.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { insertDeveloper, type NewDeveloper } from '../developers/create-developer.js';
import { ensureSandboxFixtures } from '../directory/sandbox-fixtures.js';
import { generateDirectory } from '../directory/seed.js';
import { secretToken } from '../../lib/ids.js';
import { insertMember } from '../practices/member-rows.js';
import { analyzeDirectory } from '../directory/write/analyze.js';
import { writeDirectory } from '../directory/write/write-directory.js';
import { schemaLockId } from '../../db/advisory-locks.js';

export interface BootstrapResult {
  created: boolean;
  credentials: NewDeveloper | undefined;
  credentialsFile: string;
  /** The demo practice's admin (docs/practice-guide.md): created with the demo, kept in its own 0600 file. */
  practiceAdmin: DemoPracticeAdmin | undefined;
  practiceAdminFile: string;
}

/** The sign-in of the demo practice's admin. */
export interface DemoPracticeAdmin {
  practice_id: string;
  practice_name: string;
  email: string;
  password: string;
  workspace_url: string;
}

/** The demo practice admin's e-mail address (the demo directory's first practice). */
export const DEMO_PRACTICE_ADMIN_EMAIL = 'practice-admin@demo.carebook.test';

export const DEMO_PROVIDERS = 200;

async function anySandboxDeveloper(db: Db): Promise<boolean> {
  // The practice workspace's system developer (src/domain/practices/workspace-client.ts) is not a developer.
  return !!(await db.selectFrom('developers').select('id').where('env', '=', 'sandbox').where('id', 'not like', 'dv\\_system\\_%').limit(1).executeTakeFirst());
}

/** Writes `file` atomically with mode 0600: a temporary file beside it, synced, then renamed over it. */
async function writeSecretFile(file: string, content: string): Promise<void> {
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fh = await open(tmp, 'wx', 0o600);
    try {
      await fh.writeFile(content);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await chmod(tmp, 0o600);
    await rename(tmp, file);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Creates the demo on an empty sandbox database (see the file comment for the crash guarantees);
 * on a database that has developers, returns the saved credentials, if the file is there.
 */
export async function bootstrapSandbox(
  db: Db,
  opts: { dataDir: string; publicBaseUrl: string; demoProviders?: number },
): Promise<BootstrapResult> {
  const credentialsFile = join(opts.dataDir, 'demo-credentials.json');
  const practiceAdminFile = join(opts.dataDir, 'demo-practice-admin.json');
  await db.transaction().execute((trx) => ensureSandboxFixtures(trx));
  const readJson = <T>(file: string): Promise<T | undefined> => readFile(file, 'utf8').then((s) => JSON.parse(s) as T).catch(() => undefined);
  const saved = async (): Promise<BootstrapResult> => ({
    created: false,
    credentials: await readJson<NewDeveloper>(credentialsFile),
    credentialsFile,
    practiceAdmin: await readJson<DemoPracticeAdmin>(practiceAdminFile),
    practiceAdminFile,
  });
  if (await anySandboxDeveloper(db)) return saved();

  const doc = generateDirectory(opts.demoProviders ?? DEMO_PROVIDERS, 1);
  // On PostgreSQL nothing else creates DATA_DIR (found by test/ops/scale-out.test.ts).
  await mkdir(opts.dataDir, { recursive: true });
  const creds = await db.transaction().execute(async (trx) => {
    // Processes starting together on one database: one creates the demo, the others see it.
    await sql`SELECT pg_advisory_xact_lock(${schemaLockId('carebook.demo.bootstrap')})`.execute(trx);
    if (await anySandboxDeveloper(trx)) return undefined;
    const created = await insertDeveloper(trx, {
      env: 'sandbox',
      name: 'Demo developer',
      redirectUris: [`${opts.publicBaseUrl}/demo/callback`, 'http://127.0.0.1:3000/callback'],
    });
    await writeDirectory(trx, 'sandbox', doc, { developerId: created.developer_id });
    await ensureSandboxFixtures(trx);
    // The demo practice (the directory's first) gets an admin who can sign in to the workspace at once.
    const practice = doc.practices?.[0];
    if (!practice) throw new Error('the demo directory has no practice');
    const admin: DemoPracticeAdmin = {
      practice_id: practice.id,
      practice_name: practice.name,
      email: DEMO_PRACTICE_ADMIN_EMAIL,
      password: secretToken().slice(0, 20),
      workspace_url: `${opts.publicBaseUrl}/practice`,
    };
    await insertMember(trx, 'sandbox', { practiceId: admin.practice_id, email: admin.email, password: admin.password, role: 'practice_admin' });
    await writeSecretFile(practiceAdminFile, `${JSON.stringify(admin, null, 2)}\n`);
    await writeSecretFile(credentialsFile, `${JSON.stringify(created, null, 2)}\n`);
    return { created, admin };
  });
  if (!creds) return saved();
  await analyzeDirectory(db);
  return { created: true, credentials: creds.created, credentialsFile, practiceAdmin: creds.admin, practiceAdminFile };
}
