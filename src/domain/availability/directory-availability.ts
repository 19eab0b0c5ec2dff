/**
 * Where a directory listing's availability summaries come from (`summaries.ts` has their shape and
 * computation). Two entry points, one per kind of input: `directoryAvailability` takes
 * provider-location ids (listings and tests), `directoryAvailabilityOfRows` takes the
 * provider-location rows a caller has already read (the refresher, `summary-refresh.ts`, and the
 * directory's provider-location views, src/domain/directory/provider-location-view.ts).
 *
 * Listings (a caller with a `cache`) accept a summary up to the cache's TTL old (at most 60 s) and
 * take it from three tiers, in this order: the in-process memo (`fromMemo`, `summary-cache.ts`),
 * the stored rows of `availability_summaries` (`fromStoredRows`, `summary-store.ts`), and only then
 * a computation (`computed`). The background workers keep those rows younger than the limit
 * (`summary-refresh.ts`: every 5 s, rows older than 40 s are recomputed, in batches, under an
 * lease per environment), at ~1.2 s of CPU per 10,000 summaries (Node and PostgreSQL
 * together; see docs/directory-format.md, "Performance notes"). Without a cache (the refresher
 * itself, tests) every summary is computed. Rows are never written here: the refresher writes them.
 */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { LocalClock } from '../scheduling/local-time.js';
import { loadProviderLocations, parseWeeklyBlocks, type WeeklyBlock } from '../scheduling/schedule-data.js';
import type { AvailabilityCache } from './summary-cache.js';
import { computeSummaries, type AvailabilitySummary, type SummarySource } from './summaries.js';
import { readStoredSummaries, type StoredSummary } from './summary-store.js';

/** What both entry points take besides the provider-locations. */
export interface SummaryOptions {
  env: Env;
  /** Default: the current time (injectable for tests). */
  now?: Date;
  clock?: LocalClock;
  /** A listing's memo (see the module comment); without it every summary is computed. */
  cache?: AvailabilityCache;
  /** With `cache`: the stored summaries already read for these ids (`readStoredSummaries`); then none are read here. */
  stored?: Map<string, StoredSummary>;
}

/** What the computation needs of a provider-location; callers that already query these columns pass them. */
export interface AvailabilityInputRow {
  id: string;
  provider_id: string;
  location_id: string;
  time_zone: string;
  visit_reason_ids: string[];
  default_visit_reason_id: string | null;
  /** `weeklyBlocksAggSql` of the provider-location's weekly schedules; omitted: loaded here. */
  blocks?: string | null;
}

/** One call's state: its options resolved, and the summaries found so far. */
interface Lookup {
  env: Env;
  now: Date;
  nowMs: number;
  cache: AvailabilityCache | undefined;
  clock: LocalClock;
  out: Map<string, AvailabilitySummary>;
}

function lookup(input: SummaryOptions): Lookup {
  const now = input.now ?? new Date();
  return { env: input.env, now, nowMs: now.getTime(), cache: input.cache, clock: input.clock ?? input.cache?.clock ?? new LocalClock(), out: new Map() };
}

/**
 * Availability summaries for `providerLocationIds` (any order, any count, repeats ignored), keyed by
 * id; ids that are unknown or inactive are absent. With `cache`, from the memo, else from a stored
 * row computed less than the TTL before `now` (one query for all the ids the memo lacks, or
 * `stored`), else computed; stored and computed summaries are memoised (a stored one until its own
 * TTL runs out).
 */
export async function directoryAvailability(db: Db, input: SummaryOptions & { providerLocationIds: string[] }): Promise<Map<string, AvailabilitySummary>> {
  const q = lookup(input);
  const pending = fromMemo(q, [...new Set(input.providerLocationIds)]);
  await fromStoredRows(db, q, pending, input.stored, { activeOnly: true });
  const sources = new Map<string, SummarySource>();
  for (const pl of (await loadProviderLocations(db, q.env, pending.filter((id) => !q.out.has(id)))).values()) {
    if (pl.active) sources.set(pl.id, { ...pl, defaultReason: pl.defaultVisitReasonId ?? pl.visitReasonIds[0] });
  }
  await computed(db, q, sources, undefined);
  return q.out;
}

/**
 * `directoryAvailability` for provider-locations the caller has already read (active ones only):
 * nothing is read about them here, and their weekly schedules neither when every row carries
 * `blocks`.
 */
export async function directoryAvailabilityOfRows(db: Db, input: SummaryOptions & { rows: AvailabilityInputRow[] }): Promise<Map<string, AvailabilitySummary>> {
  const q = lookup(input);
  const pending = fromMemo(q, input.rows.map((r) => r.id));
  await fromStoredRows(db, q, pending, input.stored, { activeOnly: false });
  const rows = input.rows.filter((r) => !q.out.has(r.id));
  // Blocks come with the rows unless a row lacks them (then they are all loaded with the schedule data).
  const blocks = rows.every((r) => r.blocks !== undefined) ? new Map<string, WeeklyBlock[]>() : undefined;
  const sources = new Map<string, SummarySource>();
  for (const r of rows) {
    const reasons = r.visit_reason_ids.length ? r.visit_reason_ids : r.default_visit_reason_id ? [r.default_visit_reason_id] : [];
    sources.set(r.id, { id: r.id, providerId: r.provider_id, timeZone: r.time_zone, visitReasonIds: reasons, defaultReason: r.default_visit_reason_id ?? reasons[0] });
    blocks?.set(r.id, parseWeeklyBlocks(r.blocks ?? null));
  }
  await computed(db, q, sources, blocks);
  return q.out;
}

/** Tier 1, the memo: puts its summaries of `ids` into `q.out`; returns the ids it lacks (all without a memo). */
function fromMemo(q: Lookup, ids: string[]): string[] {
  const { cache } = q;
  if (!cache) return ids;
  return ids.filter((id) => {
    const hit = cache.get(q.env, id, q.nowMs);
    if (hit) q.out.set(id, hit);
    return hit === undefined;
  });
}

/**
 * Tier 2, the stored rows (listings only, so only with a memo): puts the summaries of `ids` computed
 * less than the memo's TTL before now into `q.out` and the memo. Reads them in one query unless the
 * caller has (`stored`); `activeOnly` leaves out rows of inactive provider-locations (for ids not
 * checked yet).
 */
async function fromStoredRows(db: Db, q: Lookup, ids: string[], stored: Map<string, StoredSummary> | undefined, opts: { activeOnly: boolean }): Promise<void> {
  const { cache } = q;
  if (!cache) return;
  const rows = stored ?? (await readStoredSummaries(db, q.env, ids, { nowMs: q.nowMs, maxAgeMs: cache.ttlMs, activeOnly: opts.activeOnly }));
  for (const id of ids) {
    const s = rows.get(id);
    // A prefetched row is checked against the limit again (it was read for the same instant).
    if (!s || s.computedAtMs > q.nowMs || s.computedAtMs <= q.nowMs - cache.ttlMs) continue;
    q.out.set(id, s.summary);
    cache.set(q.env, id, s.summary, s.computedAtMs);
  }
}

/** Tier 3, the computation: the summaries of `sources`, into `q.out` and the memo (if any) as each is known. */
async function computed(db: Db, q: Lookup, sources: Map<string, SummarySource>, blocks: Map<string, WeeklyBlock[]> | undefined): Promise<void> {
  if (sources.size === 0) return;
  await computeSummaries(db, { env: q.env, sources, blocks, now: q.now, clock: q.clock }, (id, summary) => {
    q.out.set(id, summary);
    q.cache?.set(q.env, id, summary, q.nowMs);
  });
}
