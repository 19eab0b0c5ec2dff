/**
 * A small statistics sample for `availability_summaries` (PostgreSQL docs, "ALTER TABLE … SET
 * STATISTICS"; §14.2 "Statistics Used by the Planner"). The refresher rewrites every row every ~40 s,
 * so the table is due for ANALYZE at nearly every look: autovacuum's on PostgreSQL, the
 * table-maintenance job's on PGlite, where each ANALYZE holds the one engine the API shares. Its
 * sample is 300 rows per unit of the largest column target: 30,000 rows at the default 100, 3,000 at
 * 10. Measured on PGlite with 20,043 rows: 53–69 ms an ANALYZE at 100, 8.6–9.6 ms at 10
 * (docs/performance.md, "The summaries' statistics sample").
 *
 * What the planner needs of this table is its size and that its keys are unique; every statement
 * reaches the rows through an index (by primary key, or a range of the key or of the age index,
 * planned each time), which `test/directory/read-plans.test.ts` explains at two sizes. Imports only Kysely.
 */
import { sql, type Kysely } from 'kysely';

const COLUMNS = [
  'env',
  'provider_location_id',
  'computed_at',
  'new_next_available_utc',
  'new_next_28_days',
  'existing_next_available_utc',
  'existing_next_28_days',
  'first_availability_date',
  'default_visit_reason_id',
];

/** The per-column statistics target of the summaries (the default is `default_statistics_target`, 100). */
export const SUMMARY_STATISTICS_TARGET = 10;

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const c of COLUMNS) {
    await sql`ALTER TABLE availability_summaries ALTER COLUMN ${sql.id(c)} SET STATISTICS ${sql.raw(String(SUMMARY_STATISTICS_TARGET))}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const c of COLUMNS) await sql`ALTER TABLE availability_summaries ALTER COLUMN ${sql.id(c)} SET STATISTICS -1`.execute(db);
}
