/**
 * Attachments as files on the embedded engine (docs/decisions/0016-attachment-files.md). Imports only
 * Kysely.
 *
 * - `attachments.content` may be null: the row of an attachment the file store keeps (under
 *   `${DATA_DIR}/attachments/<id>`) carries its size, SHA-256 and type but not its bytes. Rows with
 *   bytes keep them and are read from the column.
 *
 * Down: rows without bytes cannot keep their file, so they are deleted (their files are then removed
 * by the start-up sweep of a later upgrade), and the column is required again.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachments ALTER COLUMN content DROP NOT NULL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM attachments WHERE content IS NULL`.execute(db);
  await sql`ALTER TABLE attachments ALTER COLUMN content SET NOT NULL`.execute(db);
}
