/**
 * Where an attachment's bytes live (docs/decisions/0016-attachment-files.md): an `AttachmentStore`,
 * created where the database is opened and passed down (no module singleton). Two kinds:
 * - `files` (the embedded engine): one file per attachment under `${DATA_DIR}/attachments/`, named by
 *   the attachment id; the row's `content` is null (src/domain/attachments/file-store.ts);
 * - `database` (PostgreSQL, where processes on several machines share nothing but the database): the
 *   bytes in the row's `content` column, as before (src/domain/attachments/database-store.ts).
 * A row whose `content` is set is read from the column whatever the store (rows written before
 * migration 0022).
 */
import type { Readable } from 'node:stream';

/** A file type found by its content (file-type's answer). */
export interface SniffedType {
  ext: string;
  mime: string;
}

/** An upload's bytes, received in full and checked for size, not yet an attachment. */
export interface StagedAttachment {
  readonly size: number;
  /** SHA-256 of the bytes (hex), computed while they arrived. */
  readonly sha256: string;
  /** The type by content, reading only the bytes the detection needs. */
  fileType(): Promise<SniffedType | undefined>;
  /**
   * Makes the bytes durable as attachment `attachmentId`, before its row is written; answers the
   * value of the row's `content` column (null: the store keeps the bytes).
   */
  place(attachmentId: string): Promise<Uint8Array | null>;
  /** The row committed: the bytes stay (`discard` no longer removes them). */
  keep(): void;
  /** Drops the bytes unless kept (staged or placed alike); safe to call more than once. */
  discard(): Promise<void>;
}

/** An upload larger than allowed, found while it streamed. */
export class AttachmentTooLarge extends Error {
  constructor() {
    super('attachment too large');
    this.name = 'AttachmentTooLarge';
  }
}

/** The stored bytes, checked, ready to stream; or why they cannot be served. */
export type OpenedContent = { ok: true; stream: Readable; size: number } | { ok: false; reason: 'missing' | 'size_mismatch' | 'sha256_mismatch' };

/** What a row tells the store about its bytes. */
export interface StoredAttachmentRef {
  id: string;
  size_bytes: number;
  sha256: string;
}

export interface AttachmentStore {
  readonly kind: 'files' | 'database';
  /**
   * Reads `source` to its end, hashing as it goes; throws `AttachmentTooLarge` as soon as more than
   * `maxBytes` arrived (what was staged is removed), and removes what it staged on any other failure
   * (an aborted upload).
   */
  stage(source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StagedAttachment>;
  /**
   * The bytes of a row whose `content` is null, checked against its size and SHA-256 before the
   * first byte is served (and again while streaming: a change meanwhile fails the stream).
   */
  open(ref: StoredAttachmentRef): Promise<OpenedContent>;
  /** Removes the bytes of these attachments (rows already deleted); ids without bytes are ignored. */
  remove(ids: readonly string[]): Promise<void>;
  /** The ids of every attachment the store holds bytes of, and removes abandoned staging files. */
  inventory(): Promise<string[]>;
}
