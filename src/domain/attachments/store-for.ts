/**
 * Which attachment store a deployment uses (docs/decisions/0016-attachment-files.md): files under
 * `${DATA_DIR}/attachments` on the embedded engine, the database row on PostgreSQL.
 */
import { join } from 'node:path';
import { databaseAttachmentStore } from './database-store.js';
import { fileAttachmentStore } from './file-store.js';
import type { AttachmentStore } from './store.js';

/** The store for a database engine and data directory (docs/decisions/0016-attachment-files.md). */
export async function attachmentStoreFor(engine: 'pglite' | 'postgres', dataDir: string): Promise<AttachmentStore> {
  return engine === 'pglite' ? fileAttachmentStore(join(dataDir, 'attachments')) : databaseAttachmentStore();
}
