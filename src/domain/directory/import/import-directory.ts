/**
 * `directory import` (docs/api/admin.md#directory-import-and-seed): parse (JSON or NDJSON), validate everything, then write in
 * one transaction, so that an import is all-or-nothing and idempotent on the file's own ids.
 * With a developer, the imported provider-locations join that developer's directory.
 */
import type { Db } from '../../../db/database.js';
import type { Env } from '../../../db/schema.js';
import { analyzeDirectory } from '../write/analyze.js';
import { writeDirectory, type WriteSummary } from '../write/write-directory.js';
import { parseDirectoryTextPartially, type ImportError, type ImportFormat } from './parse.js';
import { validateDirectory } from './validate.js';

export type ImportPhase = 'parse' | 'validate' | 'write';

export interface ImportOptions {
  env: Env;
  developerId?: string | undefined;
  format?: ImportFormat | undefined;
  /** Progress: the phase, and for `write` the records written so far out of the total. */
  onProgress?: (phase: ImportPhase, done: number, total: number) => void;
}

export type ImportResult = { ok: true; summary: WriteSummary } | { ok: false; errors: ImportError[] };

export class UnknownImportDeveloper extends Error {}

/** Imports `text`; on any error nothing is written and every error is returned with its line. */
export async function importDirectory(db: Db, text: string, opts: ImportOptions): Promise<ImportResult> {
  if (opts.developerId) {
    const dev = await db.selectFrom('developers').select('id').where('id', '=', opts.developerId).where('env', '=', opts.env).executeTakeFirst();
    if (!dev) throw new UnknownImportDeveloper(`no developer ${opts.developerId} in ${opts.env}`);
  }
  opts.onProgress?.('parse', 0, 1);
  const parsed = parseDirectoryTextPartially(text, opts.format);
  if (parsed.fatal) return { ok: false, errors: parsed.errors };
  // The records that could be read are validated even when some lines could not: one run reports
  // every bad row (a reference to a record on an unreadable line is reported as unknown too).
  opts.onProgress?.('validate', 0, 1);
  const checked = await validateDirectory(db, opts.env, parsed);
  const errors = [...parsed.errors, ...('errors' in checked ? checked.errors : [])];
  if (errors.length || 'errors' in checked) return { ok: false, errors: errors.sort((a, b) => a.line - b.line) };
  const summary = await db.transaction().execute((trx) =>
    writeDirectory(trx, opts.env, checked.document, {
      ...(opts.developerId ? { developerId: opts.developerId } : {}),
      ...(opts.onProgress ? { onProgress: (done: number, total: number) => opts.onProgress!('write', done, total) } : {}),
    }),
  );
  // Fresh statistics after every load, small or large (see analyzeDirectory).
  await analyzeDirectory(db);
  return { ok: true, summary };
}
