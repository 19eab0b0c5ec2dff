/** Adding a directory write's provider-locations to a developer's directory. */
import type { Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { chunks } from './batches.js';

/** Adds the provider-locations `ids` to the directory of `developerId` (those already in it stay as they are). */
export async function joinDeveloperDirectory(trx: Transaction<Database>, env: Env, developerId: string, ids: string[]): Promise<void> {
  for (const batch of chunks(ids)) {
    await trx
      .insertInto('developer_provider_locations')
      .values(batch.map((id) => ({ env, developer_id: developerId, provider_location_id: id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}
