/**
 * The schedule data of the availability endpoint from kept entries (`KeptSchedules`,
 * kept-schedules.ts; docs/scheduling.md, "Kept schedule data"): one statement per request when
 * everything is kept and current.
 *
 * 1. Every provider-location asked about and the visit reason are kept (current or not): one
 *    statement reads the directory's version, the providers' calendar versions and their held time
 *    over the span (`checkStatement`). Entries whose versions still match are used as they are.
 * 2. Something is not kept: one statement reads what is missing, with the versions and held time of
 *    the kept ones too (`freshStatement`).
 * 3. Kept entries whose versions moved are read again (`freshStatement`, a second statement) and
 *    kept in their place.
 *
 * Everything read fresh is kept with the versions read in its own statement (one snapshot), so a
 * kept entry never looks newer than it is. Provider-locations not found (unknown, or not in the
 * developer's directory) are never kept: a developer gaining one does not move any version.
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import {
  driverJson,
  parseWeeklyBlocks,
  pushedSlotOf,
  timeOffSpanOf,
  type ProviderLocationContext,
  type PushedSlotJson,
  type ScheduleData,
  type TimeOffJson,
} from '../scheduling/schedule-data.js';
import { DAY_MS, minutesMs } from '../scheduling/local-time.js';
import { readDurationsJson, noDurations, type Durations } from '../scheduling/visit-reason-durations.js';
import { providerLocationOfJson } from '../scheduling/provider-location-json.js';
import { checkStatement, freshStatement, type PlJson, type VersionsAndHolds } from './kept-statements.js';
import type { KeptProviderLocation, KeptSchedules, KeptSpan } from './kept-schedules.js';
import { MAX_DURATION_MINUTES } from './slots.js';

/** What a request asks for. */
export interface KeptRequest {
  env: Env;
  /** Only provider-locations of this developer's directory; omitted: any. */
  developerId?: string | undefined;
  /** Distinct provider-location ids. */
  ids: string[];
  visitReasonId: string;
  span: KeptSpan;
  /** False: held time is not read (the schedule alone). */
  withHolds: boolean;
}

export interface KeptLoad {
  /** Whether the visit reason exists. */
  reasonKnown: boolean;
  /** The provider-locations found in the directory (active or not), by id. */
  pls: Map<string, ProviderLocationContext>;
  /** Their schedule data over the span, held time included (unless not asked). */
  data: ScheduleData;
  /** The directory version the load's entries are current for (the last statement's). */
  directory: string;
  /** Statements this load took (1 when everything was kept and current). */
  statements: number;
}

/**
 * The UTC span whose data serves every zone's local dates `fromDate`..`toDate` (inclusive): a day
 * either side (UTC offsets lie within −12 h and +14 h) and the longest visit after the last day.
 */
export function keptSpan(fromDate: string, toDate: string): KeptSpan {
  return {
    fromMs: Date.parse(`${fromDate}T00:00:00Z`) - DAY_MS,
    toMs: Date.parse(`${toDate}T00:00:00Z`) + 2 * DAY_MS + minutesMs(MAX_DURATION_MINUTES),
  };
}

const calendarOf = (cv: Map<string, string>, providerId: string): string => cv.get(providerId) ?? '0';

function versionsOf(r: VersionsAndHolds): Map<string, string> {
  return new Map(driverJson<[string, string][]>(r.cv) ?? []);
}

function holdsOf(r: VersionsAndHolds, into: Map<string, [number, number][]>): void {
  for (const [providerId, s, e] of driverJson<[string, number, number][]>(r.holds) ?? []) {
    let list = into.get(providerId);
    if (!list) into.set(providerId, (list = []));
    list.push([s, e]);
  }
}


/** Reads `ids` fresh, keeps them and the visit reason, and puts them into `out` with their held time; returns the versions read. */
async function readFresh(
  db: Kysely<Database>,
  keep: KeptSchedules,
  q: KeptRequest,
  ids: string[],
  keptProviders: string[],
  out: KeptLoad,
): Promise<{ dv: string; cv: Map<string, string> }> {
  const r = await freshStatement(db, { env: q.env, developerId: q.developerId, ids, visitReasonId: q.visitReasonId, keptProviders, span: q.span, withHolds: q.withHolds });
  out.statements += 1;
  out.directory = r.dv;
  const cv = versionsOf(r);
  // This statement's held time replaces what an earlier one of the request read for the same providers.
  const holds = new Map<string, [number, number][]>();
  holdsOf(r, holds);
  const durations = noDurations();
  readDurationsJson(durations, r.durations, r.overrides);
  const reason = durations.durations.get(q.visitReasonId);
  keep.setReason(q.env, q.visitReasonId, { directory: r.dv, durations: reason ?? null });
  setReason(out, q.visitReasonId, reason);
  const pushed = new Map<string, KeptProviderLocation['pushed']>();
  for (const p of driverJson<(PushedSlotJson & { pl: string })[]>(r.pushed) ?? []) {
    let list = pushed.get(p.pl);
    if (!list) pushed.set(p.pl, (list = []));
    list.push(pushedSlotOf(p));
  }
  const timeOff = new Map<string, KeptProviderLocation['timeOff']>();
  for (const t of driverJson<(TimeOffJson & { provider_id: string })[]>(r.time_off) ?? []) {
    let list = timeOff.get(t.provider_id);
    if (!list) timeOff.set(t.provider_id, (list = []));
    list.push(timeOffSpanOf(t));
  }
  for (const p of driverJson<PlJson[]>(r.pls) ?? []) {
    const pl = providerLocationOfJson(p);
    const entry: KeptProviderLocation = {
      directory: r.dv,
      calendar: calendarOf(cv, pl.providerId),
      pl,
      blocks: parseWeeklyBlocks(p.blocks),
      overrides: durations.overrides.get(pl.id),
      pushed: pushed.get(pl.id) ?? [],
      timeOff: timeOff.get(pl.providerId) ?? [],
    };
    keep.setProviderLocation(q.env, q.developerId, q.span, entry);
    use(out, entry);
    out.data.holds.delete(pl.providerId);
  }
  for (const [providerId, ranges] of holds) out.data.holds.set(providerId, ranges);
  return { dv: r.dv, cv };
}

function setReason(out: KeptLoad, id: string, durations: Durations | undefined | null): void {
  out.reasonKnown = !!durations;
  if (durations) out.data.durations.set(id, durations);
  else out.data.durations.delete(id);
}

/** Puts a current entry into the load's result. */
function use(out: KeptLoad, e: KeptProviderLocation): void {
  const { pl } = e;
  out.pls.set(pl.id, pl);
  out.data.pls.set(pl.id, pl);
  out.data.blocks.set(pl.id, e.blocks);
  if (e.overrides) out.data.overrides.set(pl.id, e.overrides);
  else out.data.overrides.delete(pl.id);
  out.data.pushed.set(pl.id, e.pushed);
  out.data.timeOff.set(pl.providerId, e.timeOff);
}

/**
 * The provider-locations `q.ids` (those in the developer's directory) and their schedule data over
 * `q.span`, from kept entries where their versions still hold (see the module comment).
 */
export async function loadKeptSchedules(db: Kysely<Database>, keep: KeptSchedules, q: KeptRequest): Promise<KeptLoad> {
  const out: KeptLoad = {
    reasonKnown: false,
    directory: '',
    pls: new Map(),
    data: { pls: new Map(), durations: new Map(), overrides: new Map(), blocks: new Map(), pushed: new Map(), holds: new Map(), timeOff: new Map() },
    statements: 0,
  };
  const kept = new Map<string, KeptProviderLocation>();
  for (const id of q.ids) {
    const e = keep.getProviderLocation(q.env, q.developerId, id, q.span);
    if (e) kept.set(id, e);
  }
  const reason = keep.getReason(q.env, q.visitReasonId);
  const keptProviders = [...new Set([...kept.values()].map((e) => e.pl.providerId))];
  const missing = q.ids.filter((id) => !kept.has(id));

  let dv: string;
  let cv: Map<string, string>;
  let reasonCurrent: boolean;
  if (missing.length === 0 && reason) {
    const r = await checkStatement(db, q.env, keptProviders, q.span, q.withHolds);
    out.statements += 1;
    holdsOf(r, out.data.holds);
    dv = r.dv;
    out.directory = dv;
    cv = versionsOf(r);
    reasonCurrent = reason.directory === dv;
    if (reasonCurrent) setReason(out, q.visitReasonId, reason.durations);
  } else {
    // The fresh read also reads the visit reason (current whatever was kept).
    ({ dv, cv } = await readFresh(db, keep, q, missing, keptProviders, out));
    reasonCurrent = true;
  }
  const stale: string[] = [];
  for (const [id, e] of kept) {
    if (e.directory === dv && e.calendar === calendarOf(cv, e.pl.providerId)) use(out, e);
    else {
      keep.deleteProviderLocation(q.env, q.developerId, id, q.span);
      stale.push(id);
    }
  }
  if (stale.length > 0 || !reasonCurrent) {
    // Held time of the stale ones' providers is read again with them (a provider shared with a current entry: the same rows).
    await readFresh(db, keep, q, stale, [], out);
  }
  return out;
}
