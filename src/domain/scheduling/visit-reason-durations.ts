/**
 * Visit reason durations: the one place that reads them (docs/decisions/0019-practice-visit-reasons.md).
 * The directory sets a duration per patient type for each visit reason (`visit_reasons`); a practice
 * may override, per provider-location, whether a reason is offered there and its duration for each
 * patient type (`provider_location_visit_reasons`, migration 0023). The effective duration is the
 * override's when it has one, else the directory's; a reason the practice does not offer at a
 * provider-location has none there (no slot, no booking).
 *
 * Every reader (availability, booking checks, the evaluator, reschedules and moves, summaries,
 * stranded bookings, the practice's schedule view) loads both with the SQL of this module (the
 * fragments embed in the one-statement readers) and asks `effectiveDuration`, so they cannot disagree.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import { genericPlan } from '../../db/generic-plan.js';
import type { PatientType } from '../patient-type.js';

/** A duration (minutes) per patient type. */
export type Durations = Record<PatientType, number>;

/** A practice's override of one visit reason at one provider-location; null duration: the directory's. */
export interface ReasonOverride {
  offered: boolean;
  new: number | null;
  existing: number | null;
}

/** What durations a slot walk reads: the directory's by visit reason, the practice's overrides by provider-location then visit reason. */
export interface DurationData {
  durations: Map<string, Durations>;
  overrides: Map<string, Map<string, ReasonOverride>>;
}

/** Empty duration data. */
export function noDurations(): DurationData {
  return { durations: new Map(), overrides: new Map() };
}

/**
 * The effective durations of `visitReasonId` at provider-location `plId`: the override's where it
 * sets one, else the directory's. Undefined when the visit reason is unknown or not offered there.
 */
export function effectiveDurations(data: DurationData, plId: string, visitReasonId: string): Durations | undefined {
  const base = data.durations.get(visitReasonId);
  if (!base) return undefined;
  const o = data.overrides.get(plId)?.get(visitReasonId);
  if (!o) return base;
  if (!o.offered) return undefined;
  return withOverride(base, o);
}

/** The directory's durations `base` with what override `o` sets of them (whether or not it offers the reason). */
export function withOverride(base: Durations, o: ReasonOverride | undefined): Durations {
  return o ? { new: o.new ?? base.new, existing: o.existing ?? base.existing } : base;
}

/** The effective duration (minutes) for one patient type; undefined when the reason is unknown or not offered there. */
export function effectiveDuration(data: DurationData, plId: string, visitReasonId: string, patientType: PatientType): number | undefined {
  return effectiveDurations(data, plId, visitReasonId)?.[patientType];
}

/** The directory's durations of `reasonIds` as one JSON value (`[{id, new, existing}]`), for embedding in a statement. */
export function directoryDurationsJsonSql(env: Env, reasonIds: string[]): RawBuilder<unknown> {
  return sql`(SELECT json_agg(json_build_object('id', vr.id, 'new', vr.duration_new_minutes, 'existing', vr.duration_existing_minutes))
    FROM visit_reasons vr WHERE vr.env = ${env} AND vr.id = ANY(${reasonIds}::text[]))`;
}

/** The overrides of provider-locations `plIds` as one JSON value (`[{pl, id, offered, new, existing}]`), for embedding in a statement. */
export function overridesJsonSql(env: Env, plIds: string[]): RawBuilder<unknown> {
  return sql`(SELECT json_agg(json_build_object('pl', o.provider_location_id, 'id', o.visit_reason_id, 'offered', o.offered,
                'new', o.duration_new_minutes, 'existing', o.duration_existing_minutes))
    FROM provider_location_visit_reasons o WHERE o.env = ${env} AND o.provider_location_id = ANY(${plIds}::text[]))`;
}

const parsed = <T>(v: unknown): T | null => (v === null || v === undefined ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as T));

/** Fills `into` from the two JSON values of `directoryDurationsJsonSql` and `overridesJsonSql`. */
export function readDurationsJson(into: DurationData, directory: unknown, overrides: unknown): void {
  for (const d of parsed<{ id: string; new: number; existing: number }[]>(directory) ?? []) into.durations.set(d.id, { new: d.new, existing: d.existing });
  for (const o of parsed<{ pl: string; id: string; offered: boolean; new: number | null; existing: number | null }[]>(overrides) ?? []) {
    let m = into.overrides.get(o.pl);
    if (!m) into.overrides.set(o.pl, (m = new Map()));
    m.set(o.id, { offered: o.offered, new: o.new, existing: o.existing });
  }
}

/**
 * Loads, in one statement, the directory's durations of `reasonIds` and the overrides of `plIds`
 * (`effectiveDurations` reads them). Works on the root `Kysely` or inside a transaction.
 */
export async function loadDurations(db: Kysely<Database>, env: Env, plIds: string[], reasonIds: string[]): Promise<DurationData> {
  const out = noDurations();
  if (reasonIds.length === 0) return out;
  // Marked for its generic plan (src/db/generic-plan.ts): PostgreSQL's `auto` planned it again on
  // every execution (docs/performance.md, "The schedule data's plan").
  const { rows } = await genericPlan(sql<{ d: unknown; o: unknown }>`
    SELECT ${directoryDurationsJsonSql(env, reasonIds)} AS d, ${plIds.length ? overridesJsonSql(env, plIds) : sql`NULL::json`} AS o`).execute(db);
  readDurationsJson(out, rows[0]?.d, rows[0]?.o);
  return out;
}
