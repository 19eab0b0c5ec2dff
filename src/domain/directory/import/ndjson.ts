/** Writes a directory document in the NDJSON form of docs/directory-format.md (one record per line). */
import { SECTIONS, SECTION_NAMES } from '../document-schema.js';
import type { DirectoryDocument } from '../document.js';

/** Records in dependency order, each line `{"type": …, …record}`. */
export function documentToNdjson(doc: DirectoryDocument): string {
  const out: string[] = [];
  for (const s of SECTION_NAMES) {
    for (const rec of (doc[s] ?? []) as object[]) out.push(JSON.stringify({ type: SECTIONS[s].type, ...rec }));
  }
  return out.join('\n') + '\n';
}
