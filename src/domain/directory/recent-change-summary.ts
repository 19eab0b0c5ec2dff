/**
 * The 72-hour change summary of a caller's directory (docs/api/directory.md#schedulable-entities),
 * answered with the schedulable entities listing: which provider-locations were added, removed and
 * had their profile updated in the last 72 hours.
 */
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import type { DirectoryCaller } from './visible.js';

/** How far back the summary looks. */
export const RECENT_WINDOW_MS = 72 * 3600 * 1000;

export interface RecentChangeSummary {
  schedulable_entities_added: string[];
  schedulable_entities_removed: string[];
  schedulable_entities_profile_updated: string[];
}

/** Up to this many candidates, `recentChangeSummary` looks each up by key; past it, it hashes the window. */
export const RECENT_CANDIDATES_BY_KEY = 2000;

/**
 * The 72-hour change summary of the caller's directory (docs/api/directory.md#schedulable-entities): added (activated, or
 * added to the directory) and still active; removed (deactivated) and still inactive; profile
 * updated and active, not already listed as added.
 */
export async function recentChangeSummary(
  db: Db,
  caller: DirectoryCaller,
  now: Date = new Date(),
  /** Up to how many candidates are looked up by key (tests set it to exercise both ways). */
  byKeyMax = RECENT_CANDIDATES_BY_KEY,
): Promise<RecentChangeSummary> {
  const since = new Date(now.getTime() - RECENT_WINDOW_MS);
  const env = caller.env;
  const dev = caller.developerId;
  // The candidates are the caller's own: its provider-locations changed in the window while in its
  // directory (developer_directory_changes_recent) and those it added in the window
  // (developer_provider_locations_recent), two index ranges. Up to `byKeyMax` of them,
  // each is looked up by key (its directory row, its provider-location, its changes in the window by
  // directory_changes_pl): the summary then costs the caller's changes, whatever the size of its
  // directory and whatever other developers changed meanwhile. Past that (right after an import)
  // the answer is most of the directory anyway and hash joins over the window and the directory
  // cost less than as many lookups. The count is an InitPlan: only one branch runs.
  // (docs/performance.md, "Directory reads (issue #20 §7)")
  const { rows } = await sql<{ id: string; active: boolean; added: boolean; removed: boolean; updated: boolean }>`
    WITH ids AS MATERIALIZED (
      SELECT c.provider_location_id AS id FROM developer_directory_changes c
      WHERE c.env = ${env} AND c.developer_id = ${dev} AND c.changed_at >= ${since}
      UNION
      SELECT dpl.provider_location_id FROM developer_provider_locations dpl
      WHERE dpl.env = ${env} AND dpl.developer_id = ${dev} AND dpl.added_at >= ${since}
    )
    SELECT e.id, e.active, (e.added_at >= ${since} OR coalesce(c.added, false)) AS added,
      coalesce(c.removed, false) AS removed, coalesce(c.updated, false) AS updated
    FROM ids
    CROSS JOIN LATERAL (
      SELECT pl.id, pl.active, dpl.added_at
      FROM developer_provider_locations dpl
      JOIN provider_locations pl ON pl.env = dpl.env AND pl.id = dpl.provider_location_id
      WHERE dpl.developer_id = ${dev} AND dpl.provider_location_id = ids.id AND dpl.env = ${env}
      LIMIT 1
    ) e
    CROSS JOIN LATERAL (
      SELECT bool_or(dc.change = 'added') AS added, bool_or(dc.change = 'removed') AS removed,
        bool_or(dc.change = 'profile_updated') AS updated
      FROM directory_changes dc
      WHERE dc.env = ${env} AND dc.provider_location_id = ids.id AND dc.changed_at >= ${since}
    ) c
    WHERE (SELECT count(*) FROM ids) <= ${byKeyMax}
    UNION ALL
    SELECT pl.id, pl.active, (dpl.added_at >= ${since} OR coalesce(c.added, false)) AS added,
      coalesce(c.removed, false) AS removed, coalesce(c.updated, false) AS updated
    FROM ids
    JOIN developer_provider_locations dpl ON dpl.developer_id = ${dev} AND dpl.provider_location_id = ids.id AND dpl.env = ${env}
    JOIN provider_locations pl ON pl.env = ${env} AND pl.id = ids.id
    LEFT JOIN (
      SELECT dc.provider_location_id AS id, bool_or(dc.change = 'added') AS added, bool_or(dc.change = 'removed') AS removed,
        bool_or(dc.change = 'profile_updated') AS updated
      FROM directory_changes dc
      WHERE dc.env = ${env} AND dc.changed_at >= ${since}
      GROUP BY dc.provider_location_id
    ) c ON c.id = ids.id
    WHERE (SELECT count(*) FROM ids) > ${byKeyMax}
    ORDER BY id`.execute(db);
  const out: RecentChangeSummary = { schedulable_entities_added: [], schedulable_entities_removed: [], schedulable_entities_profile_updated: [] };
  for (const r of rows) {
    if (r.active && r.added) out.schedulable_entities_added.push(r.id);
    else if (!r.active && r.removed) out.schedulable_entities_removed.push(r.id);
    else if (r.active && r.updated) out.schedulable_entities_profile_updated.push(r.id);
  }
  return out;
}
