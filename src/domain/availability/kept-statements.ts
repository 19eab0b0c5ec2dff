/**
 * The two statements of kept availability (`loadKeptSchedules`, kept-load.ts; docs/scheduling.md,
 * "Kept schedule data"). Each is one statement, so what it reads comes from one snapshot: versions
 * read with data label exactly that data, on whichever server answered.
 *
 * - `checkStatement`: the versions (the directory's, and the calendars' of the providers asked
 *   about) and the held time of those providers over the span. What a request whose schedule data
 *   is all kept reads.
 * - `freshStatement`: everything availability needs of the provider-locations `ids` (those in the
 *   developer's directory, active or not) over the span, the visit reason's durations, and the same
 *   versions and held time, for their providers and for `keptProviders` (providers of kept entries
 *   read in the same request). What a request reads when something is not kept.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { heldTimeJsonSql } from '../scheduling/held-time-sql.js';
import { timeOffDates, weeklyBlocksAggSql } from '../scheduling/schedule-data.js';
import type { ProviderLocationJson } from '../scheduling/provider-location-json.js';
import { directoryDurationsJsonSql, overridesJsonSql } from '../scheduling/visit-reason-durations.js';
import type { KeptSpan } from './kept-schedules.js';
import { genericPlan } from '../../db/generic-plan.js';

/** What both statements return. */
export interface VersionsAndHolds {
  dv: string;
  /** `[provider_id, version]` of the providers that have a calendar version row. */
  cv: unknown;
  /** `[provider_id, start_ms, end_ms]` sorted by provider then start; null when none (or not asked). */
  holds: unknown;
}

/** A provider-location as `freshStatement` returns it: its row and its weekly blocks. */
export type PlJson = ProviderLocationJson & { blocks: string | null };

/** What `freshStatement` returns besides the versions and held time. */
export interface FreshRows extends VersionsAndHolds {
  pls: unknown;
  durations: unknown;
  overrides: unknown;
  pushed: unknown;
  time_off: unknown;
}

/** Held time of the providers of the array expression `providers` over the span (or NULL). */
function holdsSql(env: Env, providers: RawBuilder<unknown>, span: KeptSpan, withHolds: boolean) {
  if (!withHolds) return sql`NULL::json`;
  return heldTimeJsonSql(env, providers, new Date(span.fromMs), new Date(span.toMs));
}

/** Calendar versions of the providers of the array expression `providers`. */
function versionsSql(env: Env, providers: RawBuilder<unknown>) {
  return sql`(SELECT json_agg(json_build_array(cv.provider_id, cv.version::text))
            FROM calendar_versions cv WHERE cv.env = ${env} AND cv.provider_id = ANY(${providers}))`;
}

/** The versions, and held time of `providerIds` over `span` (see the module comment). */
export async function checkStatement(db: Kysely<Database>, env: Env, providerIds: string[], span: KeptSpan, withHolds: boolean): Promise<VersionsAndHolds> {
  const providers = sql`${providerIds}::text[]`;
  // Marked for its generic plan (src/db/generic-plan.ts): planned for its values (a provider list of
  // known length) it always looks cheaper than its generic plan, which prices the held time's probe
  // for a list of unknown length, so `auto` planned it again on every warm read (held-time-sql.ts).
  const { rows } = await genericPlan(sql<VersionsAndHolds>`
    SELECT (SELECT version::text FROM directory_version) AS dv,
      ${versionsSql(env, providers)} AS cv,
      ${holdsSql(env, providers, span, withHolds)} AS holds`).execute(db);
  return rows[0]!;
}

/** Everything about `ids` over `span`, with versions and held time (see the module comment). */
export async function freshStatement(
  db: Kysely<Database>,
  input: { env: Env; developerId: string | undefined; ids: string[]; visitReasonId: string; keptProviders: string[]; span: KeptSpan; withHolds: boolean },
): Promise<FreshRows> {
  const { env, ids, span } = input;
  const { fromDate, toDate } = timeOffDates(span);
  const member = input.developerId
    ? sql`AND EXISTS (SELECT 1 FROM developer_provider_locations dpl
                      WHERE dpl.env = pl.env AND dpl.provider_location_id = pl.id AND dpl.developer_id = ${input.developerId})`
    : sql``;
  // The providers whose versions and held time are read: those found, and those of kept entries.
  const providers = sql`ARRAY(SELECT provider_id FROM pl UNION SELECT unnest(${input.keptProviders}::text[]))`;
  const { rows } = await genericPlan(sql<FreshRows>`
    WITH pl AS (
      SELECT pl.id, pl.provider_id, pl.location_id, p.practice_id, l.time_zone, pl.active, pl.confirmation_type, pl.visit_type,
             pl.is_provider_resource, l.phone_number, l.phone_extension, p.visit_reason_ids, p.default_visit_reason_id, pl.required_fields
      FROM provider_locations pl
      JOIN providers p ON p.env = pl.env AND p.id = pl.provider_id
      JOIN locations l ON l.env = pl.env AND l.id = pl.location_id
      WHERE pl.env = ${env} AND pl.id = ANY(${ids}::text[]) ${member}
    )
    SELECT
      (SELECT version::text FROM directory_version) AS dv,
      ${versionsSql(env, providers)} AS cv,
      ${holdsSql(env, providers, span, input.withHolds)} AS holds,
      (SELECT json_agg(json_build_object(
                'id', pl.id, 'provider_id', pl.provider_id, 'location_id', pl.location_id, 'practice_id', pl.practice_id,
                'time_zone', pl.time_zone, 'active', pl.active, 'confirmation_type', pl.confirmation_type, 'visit_type', pl.visit_type,
                'is_provider_resource', pl.is_provider_resource, 'phone_number', pl.phone_number, 'phone_extension', pl.phone_extension,
                'visit_reason_ids', pl.visit_reason_ids, 'default_visit_reason_id', pl.default_visit_reason_id, 'required_fields', pl.required_fields,
                'blocks', (SELECT ${weeklyBlocksAggSql()} FROM weekly_schedules ws WHERE ws.env = ${env} AND ws.provider_location_id = pl.id)))
         FROM pl) AS pls,
      ${directoryDurationsJsonSql(env, [input.visitReasonId])} AS durations,
      ${overridesJsonSql(env, ids)} AS overrides,
      (SELECT json_agg(json_build_object(
                'pl', pl.id, 'local_date', ct.local_date::text, 'start_ms', (extract(epoch FROM ct.start_utc) * 1000)::float8,
                'allowed', ct.allowed_visit_reason_ids, 'excluded', ct.excluded_visit_reason_ids, 'patient_type', ct.patient_type) ORDER BY ct.start_utc)
         FROM calendar_timeslots ct JOIN pl ON ct.provider_id = pl.provider_id AND ct.location_id = pl.location_id
         WHERE ct.env = ${env} AND ct.start_utc >= ${new Date(span.fromMs)} AND ct.start_utc < ${new Date(span.toMs)}) AS pushed,
      (SELECT json_agg(json_build_object(
                'provider_id', t.provider_id, 'provider_location_id', t.provider_location_id, 'start_date', t.start_date::text,
                'end_date', t.end_date::text, 'start_local', to_char(t.start_local, 'HH24:MI'), 'end_local', to_char(t.end_local, 'HH24:MI')))
         FROM time_off t
         WHERE t.env = ${env} AND t.provider_id = ANY(ARRAY(SELECT provider_id FROM pl))
           AND t.start_date <= ${toDate}::date AND t.end_date >= ${fromDate}::date) AS time_off`).execute(db);
  return rows[0]!;
}
