/**
 * The `files` attachment store (docs/decisions/0016-attachment-files.md): one file per attachment in
 * one directory (`${DATA_DIR}/attachments/`), named by the attachment id. The embedded engine runs
 * PGlite on the thread that serves the API, so 10 MB through it would stop every other request
 * for seconds; a file is written and read in chunks, between which other requests run.
 *
 * - Upload: the bytes stream into `.staging-<random>` in the same directory (mode 0600), hashed as
 *   they arrive; then fsync. `place` renames it to the attachment id and fsyncs the directory, before
 *   the row is written, so a committed row always has its file. A crash between the two leaves a file
 *   without a row: harmless (nothing names it) and removed by the start-up sweep
 *   (src/domain/attachments/sweep.ts), as are staging files a crash left.
 * - Download: size and SHA-256 are checked against the row before the first byte goes out (the file
 *   is read twice, from the page cache the second time), and again while streaming.
 * - Delete: after the rows' transaction commits (a crash in between again leaves only files without rows).
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline, Transform } from 'node:stream';
import { fileTypeFromFile } from 'file-type';
import { AttachmentTooLarge, type AttachmentStore, type OpenedContent, type StagedAttachment, type StoredAttachmentRef } from './store.js';

const STAGING_PREFIX = '.staging-';
/** Attachment ids are UUIDs; anything else never becomes a path. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;

async function unlinkQuietly(path: string): Promise<void> {
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

/** fsync a directory, so a rename or unlink in it survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A transform passing bytes through unchanged that fails at the end unless they hash to `sha256`. */
function verifying(sha256: string): Transform {
  const hash = createHash('sha256');
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done) {
      done(hash.digest('hex') === sha256 ? null : new Error('attachment file changed while it was served'));
    },
  });
}

/**
 * A store keeping each attachment as a file in `dir` (created if missing; docs/decisions/0016-attachment-files.md).
 */
export async function fileAttachmentStore(dir: string): Promise<AttachmentStore> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pathOf = (id: string): string => {
    if (!SAFE_ID.test(id)) throw new Error('unsafe attachment id');
    return join(dir, id);
  };

  async function stage(source: AsyncIterable<Uint8Array>, maxBytes: number): Promise<StagedAttachment> {
    const staging = join(dir, `${STAGING_PREFIX}${randomBytes(12).toString('hex')}`);
    const hash = createHash('sha256');
    let size = 0;
    const fh = await open(staging, 'wx', 0o600);
    try {
      try {
        for await (const chunk of source) {
          size += chunk.length;
          if (size > maxBytes) throw new AttachmentTooLarge();
          hash.update(chunk);
          await fh.write(chunk);
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (err) {
      await unlinkQuietly(staging);
      throw err;
    }
    let placed: string | undefined;
    let kept = false;
    return {
      size,
      sha256: hash.digest('hex'),
      fileType: () => fileTypeFromFile(placed ?? staging),
      async place(attachmentId) {
        const target = pathOf(attachmentId);
        await rename(staging, target);
        placed = target;
        await syncDir(dir);
        return null;
      },
      keep() {
        kept = true;
      },
      async discard() {
        if (!kept) await unlinkQuietly(placed ?? staging);
      },
    };
  }

  async function openContent(ref: StoredAttachmentRef): Promise<OpenedContent> {
    const path = pathOf(ref.id);
    const info = await stat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!info) return { ok: false, reason: 'missing' };
    if (info.size !== ref.size_bytes) return { ok: false, reason: 'size_mismatch' };
    if ((await sha256OfFile(path)) !== ref.sha256) return { ok: false, reason: 'sha256_mismatch' };
    // pipeline, not pipe: a failure on either side closes the file and fails the served stream.
    const stream = verifying(ref.sha256);
    pipeline(createReadStream(path), stream, () => undefined);
    return { ok: true, size: info.size, stream };
  }

  return {
    kind: 'files',
    stage,
    open: openContent,
    async remove(ids) {
      if (!ids.length) return;
      for (const id of ids) await unlinkQuietly(pathOf(id));
      await syncDir(dir);
    },
    async inventory() {
      const names = await readdir(dir);
      const ids: string[] = [];
      for (const name of names) {
        if (name.startsWith(STAGING_PREFIX)) await unlinkQuietly(join(dir, name));
        else if (SAFE_ID.test(name)) ids.push(name);
      }
      return ids;
    },
  };
}
