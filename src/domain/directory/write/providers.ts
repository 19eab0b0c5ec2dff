/** The providers section of a directory write. */
import { sql, type Transaction } from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import type { DirectoryDocument } from '../document.js';
import { changedColumns, upsert, type Written } from './keyed-rows.js';

const PROVIDER_COLUMNS = [
  'npi', 'practice_id', 'first_name', 'last_name', 'title', 'gender_identity', 'statement', 'photo_url', 'languages',
  'certifications', 'education_institutions', 'main_specialty_id', 'specialty_ids', 'default_visit_reason_id',
  'visit_reason_ids',
] as const;

/** docs/api/directory.md#recent-change-summary: NPI, name, specialty, address or default visit reason. */
const PROVIDER_PROFILE = ['npi', 'first_name', 'last_name', 'title', 'main_specialty_id', 'specialty_ids', 'default_visit_reason_id'] as const;

/**
 * Writes the providers of `doc`. Returns what the upsert wrote and the providers whose profile
 * changed: those whose profile columns differ, then those holding a specialty in `renamedSpecialties`.
 */
export async function writeProviders(
  trx: Transaction<Database>,
  env: Env,
  doc: DirectoryDocument,
  renamedSpecialties: Set<string>,
): Promise<{ written: Written; profileChanged: Set<string> }> {
  const providerRows = (doc.providers ?? []).map((p) => ({
    env,
    id: p.id,
    npi: p.npi,
    practice_id: p.practice_id,
    first_name: p.first_name,
    last_name: p.last_name,
    title: p.title ?? null,
    gender_identity: p.gender_identity ?? null,
    statement: p.statement ?? null,
    photo_url: p.photo_url ?? null,
    languages: p.languages ?? [],
    certifications: p.certifications ?? [],
    education_institutions: p.education_institutions ?? [],
    main_specialty_id: p.main_specialty_id ?? null,
    specialty_ids: p.specialty_ids ?? [],
    default_visit_reason_id: p.default_visit_reason_id ?? null,
    visit_reason_ids: p.visit_reason_ids ?? [],
  }));
  const profileChanged = await changedColumns(trx, 'providers', env, providerRows, [...PROVIDER_PROFILE]);
  const written = await upsert(trx, 'providers', providerRows, [...PROVIDER_COLUMNS], { updated_at: sql<Date>`now()` });
  if (renamedSpecialties.size) {
    const ids = [...renamedSpecialties];
    const holders = await trx
      .selectFrom('providers')
      .select('id')
      .where('env', '=', env)
      .where((eb) => eb.or([eb('main_specialty_id', 'in', ids), sql<boolean>`specialty_ids && ${sql.val(ids)}::text[]`]))
      .execute();
    holders.forEach((r) => profileChanged.add(r.id));
  }
  return { written, profileChanged };
}
