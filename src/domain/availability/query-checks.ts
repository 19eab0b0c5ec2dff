/**
 * The checks of an availability query a schema cannot make (docs/api/errors.md, "Validation"): how
 * many provider-locations, the dates' form, and the window (the end inclusive, not before the start,
 * at most `MAX_SPAN_DAYS` after it). Every error at once; any value is taken for each parameter (one
 * of the wrong type is skipped: the schema names it), so it also serves a query the schema refused.
 */
import type { FieldError } from '../errors.js';
import { isLocalDate, type LocalClock } from '../scheduling/local-time.js';

/** At most this many provider-locations per availability request. */
export const MAX_AVAILABILITY_IDS = 50;
/** The window's end is at most this many days after its start. */
export const MAX_SPAN_DAYS = 31;

/** The distinct-or-not ids of a comma list. */
export function idList(raw: unknown): string[] {
  return typeof raw === 'string' ? raw.split(',').map((s) => s.trim()).filter(Boolean) : [];
}

/** The error of a window `from`..`end` (local dates), if any. */
export function spanError(clock: LocalClock, from: string, end: string | undefined): FieldError | undefined {
  if (end === undefined || !isLocalDate(end) || !isLocalDate(from)) return undefined;
  if (end < from) return { field: 'end_date_in_provider_local_time', message: `must not be before the start date (${from})` };
  if (clock.daysBetween(from, end) > MAX_SPAN_DAYS) {
    return { field: 'end_date_in_provider_local_time', message: `must be at most ${MAX_SPAN_DAYS} days after the start date (${from})` };
  }
  return undefined;
}

/** Every error of the query's ids and dates. */
export function availabilityQueryErrors(q: Record<string, unknown>, clock: LocalClock): FieldError[] {
  const errors: FieldError[] = [];
  if (typeof q.provider_location_ids === 'string') {
    const ids = idList(q.provider_location_ids);
    if (ids.length === 0) errors.push({ field: 'provider_location_ids', message: 'is required' });
    else if (ids.length > MAX_AVAILABILITY_IDS) errors.push({ field: 'provider_location_ids', message: `at most ${MAX_AVAILABILITY_IDS} ids` });
  }
  const start = typeof q.start_date_in_provider_local_time === 'string' ? q.start_date_in_provider_local_time : undefined;
  const end = typeof q.end_date_in_provider_local_time === 'string' ? q.end_date_in_provider_local_time : undefined;
  if (start !== undefined && !isLocalDate(start)) errors.push({ field: 'start_date_in_provider_local_time', message: 'must be a date YYYY-MM-DD' });
  if (end !== undefined && !isLocalDate(end)) errors.push({ field: 'end_date_in_provider_local_time', message: 'must be a date YYYY-MM-DD' });
  const span = start !== undefined ? spanError(clock, start, end) : undefined;
  if (span) errors.push(span);
  return errors;
}
