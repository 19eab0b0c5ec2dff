/**
 * A sandbox developer's own copy of the demo directory (docs/decisions/0015-developer-console.md,
 * "Sandbox first"): a small generated directory (`COPY_PROVIDERS` providers, the demo's generator)
 * whose practice, provider, location and facility ids carry a tag of the developer, written into
 * that developer's directory only. So nothing the developer books there (a provider's time is
 * shared by every developer who lists it) touches another developer's data. The sandbox fixtures
 * join every sandbox developer's directory anyway (`insertDeveloper`).
 */
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DirectoryDocument } from '../directory/document.js';
import { generateDirectory } from '../directory/seed.js';
import { writeDirectory } from '../directory/write/write-directory.js';

/** Providers in a sandbox developer's copy (1–2 locations each). */
export const COPY_PROVIDERS = 20;

/** The generator's own ids (`pt_1_…`, `pr_1_…`, `lo_1_…`, `fa_1_…`) with the developer's tag in place of the seed. */
function retag(doc: DirectoryDocument, tag: string): DirectoryDocument {
  const re = /^(pt|pr|lo|fa)_1_/;
  const id = (v: string): string => v.replace(re, `$1_${tag}_`);
  const pl = (v: string): string => v.split('|').map(id).join('|');
  return {
    ...doc,
    practices: doc.practices?.map((p) => ({ ...p, id: id(p.id) })),
    providers: doc.providers?.map((p) => ({ ...p, id: id(p.id), practice_id: id(p.practice_id), ...(p.photo_url ? { photo_url: p.photo_url.replace(/pr_1_/, `pr_${tag}_`) } : {}) })),
    locations: doc.locations?.map((l) => ({ ...l, id: id(l.id) })),
    provider_locations: doc.provider_locations?.map((x) => ({ ...x, provider_id: id(x.provider_id), location_id: id(x.location_id) })),
    facilities: doc.facilities?.map((f) => ({ ...f, id: id(f.id), provider_location_id: f.provider_location_id ? pl(f.provider_location_id) : f.provider_location_id })),
  } as DirectoryDocument;
}

/** The tag of a developer's directory copy: 10 hex digits of its id's SHA-256 (ids stay short and of the directory's alphabet). */
export function copyTag(developerId: string): string {
  return `c${createHash('sha256').update(developerId).digest('hex').slice(0, 10)}`;
}

/** Writes the developer's own copy of the demo directory within `trx` (the sandbox). */
export async function writeDirectoryCopy(trx: Transaction<Database>, developerId: string): Promise<{ providerLocations: number }> {
  const doc = retag(generateDirectory(COPY_PROVIDERS, 1), copyTag(developerId));
  const summary = await writeDirectory(trx, 'sandbox', doc, { developerId });
  return { providerLocations: summary.provider_locations };
}
