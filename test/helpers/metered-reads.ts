/**
 * A production test app whose reads handle (the read replica's place, docs/decisions/0020-read-replicas.md)
 * is a metered handle on the test database, so a test counts every statement the read routes send
 * (bench/statement-meter.ts). The primary (`t.db`) is not metered.
 */
import { Kysely } from 'kysely';
import type { StatementMeter } from '../../bench/statement-meter.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';
import { ReplicaState } from '../../src/db/replica-state.js';
import type { Database } from '../../src/db/schema.js';
import { writeDirectory } from '../../src/domain/directory/write/write-directory.js';
import { schedulingDirectory } from '../appointments/fixtures.js';
import { newDeveloper, testApp, type TestApp } from './app.js';
import { clientToken } from './auth.js';
import { testDatabaseUrl } from './db.js';

export function meteredReadsApp(meter: StatementMeter): Promise<TestApp> {
  return testApp(
    { APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.org' },
    {
      replica: async (h) => {
        let reads: Db;
        let close = async (): Promise<void> => undefined;
        if (testDatabaseUrl) {
          const m = await openDatabase({ databaseUrl: testDatabaseUrl, schema: h.schema!, poolSize: 4, wrapDialect: meter.wrap });
          reads = m.db;
          close = () => m.close();
        } else {
          // Not destroyed: that would close the engine the test app uses.
          reads = new Kysely<Database>({ dialect: meter.wrap(new PGliteDialect(h.pglite!)) });
        }
        return { reads, state: new ReplicaState(1000), close };
      },
    },
  );
}

/**
 * `meteredReadsApp` with a developer whose production directory is the scheduling fixtures', and a
 * client token of that developer: what the statement-counting tests of the read routes start from.
 */
export async function meteredDirectoryApp(meter: StatementMeter): Promise<{ t: TestApp; token: string }> {
  const t = await meteredReadsApp(meter);
  const dev = await newDeveloper(t);
  await t.db.transaction().execute((trx) => writeDirectory(trx, 'production', schedulingDirectory(), { developerId: dev.developer_id }));
  return { t, token: await clientToken(t, dev) };
}
