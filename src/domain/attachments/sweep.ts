/**
 * The start-up sweep of the `files` attachment store (docs/decisions/0016-attachment-files.md): a
 * crash can leave a staging file (an upload in progress) or a file whose row never committed (or
 * whose row was deleted before the file was); nothing names them, and the sweep removes them. Run by
 * `startService` before the service listens, when no upload can be in flight (the embedded engine
 * admits one process).
 */
import type { Db } from '../../db/database.js';
import type { AttachmentStore } from './store.js';

const BATCH = 1000;

/** Removes the store's files that no row names; answers how many went. */
export async function sweepAttachmentFiles(db: Db, store: AttachmentStore): Promise<number> {
  const ids = await store.inventory();
  const orphans: string[] = [];
  for (let i = 0; i < ids.length; i += BATCH) {
    const batch = ids.slice(i, i + BATCH);
    const rows = await db.selectFrom('attachments').select('id').where('id', 'in', batch).where('content', 'is', null).execute();
    const named = new Set(rows.map((r) => r.id));
    orphans.push(...batch.filter((id) => !named.has(id)));
  }
  await store.remove(orphans);
  return orphans.length;
}
