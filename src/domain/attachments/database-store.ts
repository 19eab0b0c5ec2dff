/**
 * The `database` attachment store (docs/decisions/0016-attachment-files.md): the bytes go into the
 * row's `content` column, as they always did. For PostgreSQL, where several processes on several
 * machines share nothing but the database.
 */
import { createHash } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { AttachmentTooLarge, type AttachmentStore, type OpenedContent, type StagedAttachment } from './store.js';

/** A store keeping attachments in the database row (docs/decisions/0016-attachment-files.md). */
export function databaseAttachmentStore(): AttachmentStore {
  return {
    kind: 'database',
    async stage(source, maxBytes): Promise<StagedAttachment> {
      const hash = createHash('sha256');
      const chunks: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of source) {
        size += chunk.length;
        if (size > maxBytes) throw new AttachmentTooLarge();
        hash.update(chunk);
        chunks.push(chunk);
      }
      const content = Buffer.concat(chunks);
      return {
        size,
        sha256: hash.digest('hex'),
        fileType: async () => fileTypeFromBuffer(content),
        place: async () => content,
        keep: () => undefined,
        discard: async () => undefined,
      };
    },
    // Rows of this store carry their bytes; one without them has nothing to serve.
    open: async (): Promise<OpenedContent> => ({ ok: false, reason: 'missing' }),
    remove: async () => undefined,
    inventory: async () => [],
  };
}
