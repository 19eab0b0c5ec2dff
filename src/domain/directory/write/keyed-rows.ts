/**
 * The statements every section of a directory write shares: upserts of rows keyed by (env, id)
 * that touch only rows that really change, the read of which profile columns a write changes, and
 * the replacement of a parent's child rows.
 */
import {
  sql,
  type Insertable,
  type OnConflictTables,
  type OnConflictUpdateDatabase,
  type RawBuilder,
  type Transaction,
  type UpdateObject,
} from 'kysely';
import type { Database, Env } from '../../../db/schema.js';
import { chunks } from './batches.js';

/** The directory tables keyed by (env, id), written by upsert. */
export type KeyedTable =
  | 'specialties' | 'visit_reasons' | 'insurance_carriers' | 'insurance_plans' | 'practices' | 'providers'
  | 'locations' | 'provider_locations' | 'facilities';

/** A column of `T` a directory write may compare and set. */
export type Column<T extends KeyedTable> = keyof Database[T] & string;

/** The ids an upsert inserted and those it really changed. */
export interface Written {
  inserted: string[];
  updated: string[];
}

/**
 * Upserts rows keyed by (env, id); returns the ids that were inserted or really changed (rows whose
 * compared columns are equal are left untouched, so re-importing the same file changes nothing).
 */
export async function upsert<T extends KeyedTable>(
  trx: Transaction<Database>,
  table: T,
  rows: Insertable<Database[T]>[],
  compare: Column<T>[],
  extraSet: { updated_at?: RawBuilder<Date> } = {},
): Promise<Written> {
  const inserted: string[] = [];
  const updated: string[] = [];
  // Each compared column takes the proposed row's value, then `extraSet`. TypeScript cannot relate
  // an object built from a generic table's column names to Kysely's update type for that table.
  const setColumns = {
    ...Object.fromEntries(compare.map((c) => [c, sql.ref(`excluded.${c}`)])),
    ...extraSet,
  } as UpdateObject<OnConflictUpdateDatabase<Database, T>, OnConflictTables<T>, OnConflictTables<T>>;
  for (const batch of chunks(rows)) {
    const res = await trx
      .insertInto(table)
      .values(batch)
      .onConflict((oc) =>
        oc
          .columns(['env', 'id'])
          .doUpdateSet(() => setColumns)
          .where(
            sql<boolean>`(${sql.join(compare.map((c) => sql.ref(`${table}.${c}`)))}) IS DISTINCT FROM (${sql.join(
              compare.map((c) => sql.ref(`excluded.${c}`)),
            )})`,
          ),
      )
      .returning(['id', sql<boolean>`(xmax = 0)`.as('inserted')])
      .execute();
    for (const r of res) (r.inserted ? inserted : updated).push(r.id);
  }
  return { inserted, updated };
}

/** The tables whose profile columns a write compares before its upsert. */
export type ProfileTable = 'specialties' | 'providers' | 'locations';

/** A column of any profile table. */
type ProfileColumn = { [K in ProfileTable]: Column<K> }[ProfileTable];

/**
 * The ids of `rows` that already exist and whose `columns` differ from what is stored: read before an
 * upsert, so that only changes to the fields docs/api/directory.md#schedulable-entities names count as a profile update.
 */
export async function changedColumns<T extends ProfileTable, R extends Insertable<Database[T]> & { id: string }>(
  trx: Transaction<Database>,
  table: T,
  env: Env,
  rows: R[],
  columns: (ProfileColumn & keyof R)[],
): Promise<Set<string>> {
  // Kysely's select and where do not resolve on a generic table: the statement is built on the
  // union of the profile tables; the signature ties rows and columns to the table named.
  const from: ProfileTable = table;
  const out = new Set<string>();
  const norm = (v: unknown): string => JSON.stringify(v === undefined ? null : v instanceof Date ? v.toISOString() : v);
  for (const batch of chunks(rows)) {
    const stored: Record<string, unknown>[] = await trx
      .selectFrom(from)
      .select(['id', ...columns])
      .where('env', '=', env)
      .where('id', 'in', batch.map((r) => r.id))
      .execute();
    const byId = new Map(stored.map((r) => [r.id, r]));
    for (const r of batch) {
      const old = byId.get(r.id);
      if (old && columns.some((c) => norm(old[c]) !== norm(r[c]))) out.add(String(r.id));
    }
  }
  return out;
}

/** The child tables a directory write replaces per parent, with their parent column. */
export interface ChildTables {
  practice_insurance_plans: 'practice_id';
  provider_location_insurance_plans: 'provider_location_id';
  weekly_schedules: 'provider_location_id';
}

/**
 * Replaces the child rows of the given parents: deletes theirs and inserts `rows`, in batches.
 * Duplicate child rows (the same plan listed twice) are inserted once.
 */
export async function replaceChildren<T extends keyof ChildTables>(
  trx: Transaction<Database>,
  table: T,
  parentColumn: ChildTables[T],
  parentIds: string[],
  rows: Insertable<Database[T]>[],
  env: Env,
): Promise<void> {
  // As in changedColumns: the delete is built on the union of the child tables.
  const from: keyof ChildTables = table;
  const column: ChildTables[keyof ChildTables] = parentColumn;
  for (const batch of chunks(parentIds)) {
    await trx.deleteFrom(from).where('env', '=', env).where(column, 'in', batch).execute();
  }
  const unique = table === 'weekly_schedules' ? rows : [...new Map(rows.map((r) => [JSON.stringify(r), r])).values()];
  for (const batch of chunks(unique)) await trx.insertInto(table).values(batch).execute();
}
