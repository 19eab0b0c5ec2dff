/**
 * Insurance plans (docs/api/directory.md#insurance-plans; docs/api/conventions.md#additional-fields): served with `carrier: {id, name}`,
 * `plan_type` and the same value as `network_type`; the listing filters by either name.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { keptPage, readVersionedPage, type KeptReference } from './kept-reference.js';

export const PLAN_TYPES = ['hmo', 'ppo', 'pos', 'epo', 'indemnity', 'aso', 'aco', 'acp', 'medicare', 'medicaid', 'other', 'uncategorized', 'hmo_pos'] as const;
export const PROGRAM_TYPES = ['commercial', 'commercial_exchange', 'medicare', 'medicaid', 'workers_compensation', 'uncategorized'] as const;
export const PLAN_STATUSES = ['inactive', 'active', 'deleted'] as const;
export const CARE_CATEGORIES = ['health', 'dental', 'vision'] as const;

export interface InsurancePlan {
  id: string;
  name: string;
  carrier: { id: string; name: string };
  plan_type: string;
  network_type: string;
  program_type: string;
  status: (typeof PLAN_STATUSES)[number];
  care_categories: string[];
  coverage_area: { is_national: boolean; states: string[] | null };
  ref_metadata: { created_timestamp_utc: string; last_updated_timestamp_utc: string };
}

export interface PlanFilter {
  status: string;
  state?: string | undefined;
  planType?: string | undefined;
  programType?: string | undefined;
  careCategory?: string | undefined;
}

function base(db: Db, env: Env) {
  return db
    .selectFrom('insurance_plans as p')
    .innerJoin('insurance_carriers as c', (j) => j.onRef('c.env', '=', 'p.env').onRef('c.id', '=', 'p.carrier_id'))
    .where('p.env', '=', env);
}

const COLUMNS = [
  'p.id', 'p.name', 'p.carrier_id', 'c.name as carrier_name', 'p.plan_type', 'p.program_type', 'p.status',
  'p.care_categories', 'p.is_national', 'p.states', 'p.created_at', 'p.updated_at',
] as const;

type Row = {
  id: string; name: string; carrier_id: string; carrier_name: string; plan_type: string; program_type: string; status: (typeof PLAN_STATUSES)[number];
  care_categories: string[]; is_national: boolean; states: string[] | null; created_at: Date; updated_at: Date;
};

function toPlan(r: Row): InsurancePlan {
  return {
    id: r.id,
    name: r.name,
    carrier: { id: r.carrier_id, name: r.carrier_name },
    plan_type: r.plan_type,
    network_type: r.plan_type,
    program_type: r.program_type,
    status: r.status,
    care_categories: r.care_categories,
    coverage_area: { is_national: r.is_national, states: r.is_national ? null : (r.states ?? []) },
    ref_metadata: {
      created_timestamp_utc: new Date(r.created_at).toISOString(),
      last_updated_timestamp_utc: new Date(r.updated_at).toISOString(),
    },
  };
}

/**
 * Plans matching the filters of docs/api/directory.md#insurance-plans, ordered by id: one statement,
 * or, with `keep`, the kept page while the directory is unchanged (kept-reference.ts).
 */
export async function listInsurancePlans(
  db: Db,
  env: Env,
  f: PlanFilter & { page: number; pageSize: number },
  keep?: KeptReference,
): Promise<{ total: number; items: InsurancePlan[] }> {
  let q = base(db, env).where('p.status', '=', f.status as 'active');
  if (f.state) q = q.where((eb) => eb.or([eb('p.is_national', '=', true), eb(sql.val(f.state), '=', sql<string>`ANY(p.states)`)]));
  if (f.planType) q = q.where('p.plan_type', '=', f.planType);
  if (f.programType) q = q.where('p.program_type', '=', f.programType);
  if (f.careCategory) q = q.where(sql.val(f.careCategory), '=', sql<string>`ANY(p.care_categories)`);
  const key = ['insurance_plans', env, f.status, f.state ?? '', f.planType ?? '', f.programType ?? '', f.careCategory ?? '', f.page, f.pageSize].join('\u0000');
  return keptPage(db, keep, key, async () => {
    const r = await readVersionedPage<Row>(db, q.select([...COLUMNS]).orderBy('p.id').limit(f.pageSize).offset(f.page * f.pageSize), q.select(sql<string>`count(*)`.as('n')));
    return { ...r, items: r.items.map(toPlan) };
  });
}

/** One plan by id (any status), or undefined. */
export async function getInsurancePlan(db: Db, env: Env, id: string): Promise<InsurancePlan | undefined> {
  const r = await base(db, env).where('p.id', '=', id).select([...COLUMNS]).executeTakeFirst();
  return r ? toPlan(r as Row) : undefined;
}

/** Which of `ids` exist in the environment. */
export async function existingPlanIds(db: Db, env: Env, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('insurance_plans').select('id').where('env', '=', env).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}
