/**
 * The availability endpoint's reads from kept schedule data (docs/scheduling.md, "Kept schedule
 * data"; docs/api/availability.md#availability-request): the span a request's data is read and
 * kept for, and `first_availability` after an empty window. The slots themselves are
 * `walkAvailability` / `walkFirstAvailability` (slot-lists.ts) over `loadKeptSchedules` (kept-load.ts).
 */
import type { Kysely } from 'kysely';
import type { Database, Env } from '../../db/schema.js';
import type { PatientType } from '../patient-type.js';
import type { LocalClock } from '../scheduling/local-time.js';
import type { SlotSource } from '../scheduling/schedule-data.js';
import { keptSpan, loadKeptSchedules } from './kept-load.js';
import type { KeptSchedules, KeptSpan } from './kept-schedules.js';
import { acceptingInsurance } from './insurance-filter.js';
import { FIRST_AVAILABILITY_DAYS, firstAvailabilityWindows, walkFirstAvailability } from './slot-lists.js';
import type { Timeslot } from './slots.js';

/**
 * The span of an availability request: the query's local dates, else today in any zone (the UTC
 * date ± 1) and 7 days on. The same for every provider-location, whatever its zone, so one key
 * finds its kept data before its zone is known; it changes at UTC midnight for the default window.
 */
export function availabilitySpan(clock: LocalClock, now: Date, from: string | undefined, to: string | undefined): KeptSpan {
  const utcToday = clock.today('UTC', now);
  return keptSpan(from ?? clock.addDays(utcToday, -1), to ?? clock.addDays(from ?? clock.addDays(utcToday, 1), 7));
}

/** The span of `first_availability` from `from` (default today) to `days` after today, in any zone; undefined when empty. */
export function firstAvailabilitySpan(clock: LocalClock, now: Date, from: string | undefined, days: number): KeptSpan | undefined {
  const utcToday = clock.today('UTC', now);
  const earliest = clock.addDays(utcToday, -1);
  const last = clock.addDays(utcToday, days + 1);
  const first = from && from > earliest ? from : earliest;
  return first > last ? undefined : keptSpan(first, last);
}

/**
 * `first_availability` of provider-locations `pls` (already found, active) from local date `from`,
 * from kept schedule data (one statement when it is kept: versions and held time). Returns the slots
 * and the statements taken.
 */
export async function keptFirstAvailability(
  db: Kysely<Database>,
  keep: KeptSchedules,
  input: {
    env: Env;
    developerId?: string | undefined;
    pls: Map<string, SlotSource>;
    visitReasonId: string;
    patientType: PatientType;
    from?: string | undefined;
    now: Date;
    clock: LocalClock;
  },
): Promise<{ found: Map<string, Timeslot>; statements: number }> {
  const { windows } = firstAvailabilityWindows(input.pls, { from: input.from, now: input.now, clock: input.clock, days: FIRST_AVAILABILITY_DAYS });
  const span = firstAvailabilitySpan(input.clock, input.now, input.from, FIRST_AVAILABILITY_DAYS);
  if (windows.size === 0 || !span) return { found: new Map(), statements: 0 };
  const load = await loadKeptSchedules(db, keep, {
    env: input.env,
    developerId: input.developerId,
    ids: [...windows.keys()],
    visitReasonId: input.visitReasonId,
    span,
    withHolds: true,
  });
  // Provider-locations that left the directory or were deactivated since: no first slot.
  const pls = new Map([...load.pls].filter(([, p]) => p.active));
  const found = walkFirstAvailability(pls, load.data, new Map([...windows].filter(([id]) => pls.has(id))), input);
  return { found, statements: load.statements };
}

/**
 * Which of `ids` take the insurance plan and/or carrier of `filter`
 * (docs/api/availability.md#availability-request), from kept answers current for directory version
 * `directory` (read by the request's statement before); the others are read in one statement and
 * kept under that version. Read after it, they are never older than their label: at worst one is
 * read again on the next request.
 */
export async function keptInsurance(
  db: Kysely<Database>,
  keep: KeptSchedules,
  input: { env: Env; directory: string; ids: string[]; filter: { planId?: string; carrierId?: string } },
): Promise<Set<string>> {
  const key = `${input.filter.planId ?? ''}\u0000${input.filter.carrierId ?? ''}`;
  const ok = new Set<string>();
  const unknown: string[] = [];
  for (const id of input.ids) {
    const e = keep.getInsurance(input.env, key, id);
    if (e && e.directory === input.directory) {
      if (e.accepted) ok.add(id);
    } else unknown.push(id);
  }
  if (unknown.length === 0) return ok;
  const read = await acceptingInsurance(db, input.env, unknown, input.filter);
  for (const id of unknown) {
    keep.setInsurance(input.env, key, id, { directory: input.directory, accepted: read.has(id) });
    if (read.has(id)) ok.add(id);
  }
  return ok;
}
