/** `directory seed`: generate a directory and write it, optionally into a developer's directory. */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { generateDirectory } from './seed.js';
import { analyzeDirectory } from './write/analyze.js';
import { writeDirectory, type WriteSummary } from './write/write-directory.js';

export class UnknownDeveloper extends Error {}

export async function seedDirectory(
  db: Db,
  input: { env: Env; providers: number; seed?: number; developerId?: string },
): Promise<WriteSummary> {
  if (input.developerId) {
    const dev = await db
      .selectFrom('developers')
      .select('id')
      .where('id', '=', input.developerId)
      .where('env', '=', input.env)
      .executeTakeFirst();
    if (!dev) throw new UnknownDeveloper(`no developer ${input.developerId} in ${input.env}`);
  }
  const doc = generateDirectory(input.providers, input.seed ?? 1);
  const summary = await db.transaction().execute((trx) =>
    writeDirectory(trx, input.env, doc, input.developerId ? { developerId: input.developerId } : {}),
  );
  await analyzeDirectory(db);
  return summary;
}
