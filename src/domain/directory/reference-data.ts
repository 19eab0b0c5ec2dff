/**
 * Reference data of the environment (docs/api/directory.md#reference-data, docs/api/directory.md#specialties-and-visit-reasons): specialties and
 * visit reasons. They describe the directory's vocabulary and are the same for every developer.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { keptPage, readVersionedPage, type KeptReference } from './kept-reference.js';

export interface Specialty {
  id: string;
  name: string;
  care_category: 'health' | 'dental' | 'vision';
  default_visit_reason_id: string;
  default_visit_reason_name: string;
}

export interface VisitReason {
  id: string;
  name: string;
  specialty_id: string;
}

interface Page {
  page: number;
  pageSize: number;
}

function specialtyQuery(db: Db, env: Env) {
  return db
    .selectFrom('specialties as s')
    .leftJoin('visit_reasons as v', (j) => j.onRef('v.env', '=', 's.env').onRef('v.id', '=', 's.default_visit_reason_id'))
    .where('s.env', '=', env);
}

function toSpecialty(r: { id: string; name: string; care_category: Specialty['care_category']; default_visit_reason_id: string; vname: string | null }): Specialty {
  return {
    id: r.id,
    name: r.name,
    care_category: r.care_category,
    default_visit_reason_id: r.default_visit_reason_id,
    default_visit_reason_name: r.vname ?? '',
  };
}

/**
 * Specialties, by id, optionally of one care category (docs/api/directory.md#specialties-and-visit-reasons):
 * one statement, or, with `keep`, the kept page while the directory is unchanged (kept-reference.ts).
 */
export async function listSpecialties(
  db: Db,
  env: Env,
  q: Page & { careCategory?: string | undefined },
  keep?: KeptReference,
): Promise<{ total: number; items: Specialty[] }> {
  let query = specialtyQuery(db, env);
  if (q.careCategory) query = query.where('s.care_category', '=', q.careCategory as Specialty['care_category']);
  const key = `specialties\u0000${env}\u0000${q.careCategory ?? ''}\u0000${q.page}\u0000${q.pageSize}`;
  return keptPage(db, keep, key, async () => {
    const r = await readVersionedPage<Parameters<typeof toSpecialty>[0]>(
      db,
      query.select(['s.id', 's.name', 's.care_category', 's.default_visit_reason_id', 'v.name as vname']).orderBy('s.id').limit(q.pageSize).offset(q.page * q.pageSize),
      query.select(sql<string>`count(*)`.as('n')),
    );
    return { ...r, items: r.items.map(toSpecialty) };
  });
}

export async function getSpecialty(db: Db, env: Env, id: string): Promise<Specialty | undefined> {
  const r = await specialtyQuery(db, env)
    .where('s.id', '=', id)
    .select(['s.id', 's.name', 's.care_category', 's.default_visit_reason_id', 'v.name as vname'])
    .executeTakeFirst();
  return r ? toSpecialty(r) : undefined;
}

/** Visit reasons, by id, optionally of one specialty (docs/api/directory.md#specialties-and-visit-reasons); kept as `listSpecialties`. */
export async function listVisitReasons(
  db: Db,
  env: Env,
  q: Page & { specialtyId?: string | undefined },
  keep?: KeptReference,
): Promise<{ total: number; items: VisitReason[] }> {
  let query = db.selectFrom('visit_reasons').where('env', '=', env);
  if (q.specialtyId) query = query.where('specialty_id', '=', q.specialtyId);
  const key = `visit_reasons\u0000${env}\u0000${q.specialtyId ?? ''}\u0000${q.page}\u0000${q.pageSize}`;
  return keptPage(db, keep, key, () =>
    readVersionedPage<VisitReason>(
      db,
      query.select(['id', 'name', 'specialty_id']).orderBy('id').limit(q.pageSize).offset(q.page * q.pageSize),
      query.select(sql<string>`count(*)`.as('n')),
    ),
  );
}

export async function getVisitReason(db: Db, env: Env, id: string): Promise<VisitReason | undefined> {
  return db.selectFrom('visit_reasons').select(['id', 'name', 'specialty_id']).where('env', '=', env).where('id', '=', id).executeTakeFirst();
}
