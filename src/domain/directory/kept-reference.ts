/**
 * Reference listings kept by directory version (issue #20 §6; docs/performance.md, "Reference
 * listings kept by directory version"): specialties, visit reasons and insurance plans change only
 * with the directory, and every table they read moves `directory_version` (migrations 0010, 0012,
 * 0025). A listing's page is read in one statement together with the version it saw (one snapshot),
 * and kept under that label; a later request for the same page reads only the version and answers
 * from the kept page while it is unchanged. Equal versions mean the same committed directory, on
 * the primary or on a replica, so a kept page is never older than the version a request sees.
 *
 * The same instance keeps every specialty's name by id (`specialtyNames`), for the provider-location
 * views (src/domain/directory/provider-location-view.ts), which use them only when the version their
 * own statement saw is the one the names were read with.
 *
 * One instance per application (src/routes/v1/directory/index.ts makes it). Bounded by the rows kept, not by pages:
 * a page of 1,000 plans weighs as much as 1,000 pages of one.
 */
import { sql, type Compilable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import { driverJson } from '../scheduling/schedule-data.js';

/** A listing's page and total, as read with the directory version it saw. */
export interface VersionedPage<T> {
  version: string;
  total: number;
  items: T[];
}

/** Rows kept at most, over every page (about 0.5 kB each for the largest, insurance plans). */
export const KEPT_REFERENCE_MAX_ROWS = 50_000;

/** Every specialty's name by id in one environment, as read with the directory version it saw. */
export interface KeptSpecialtyNames {
  version: string;
  names: Map<string, string>;
}

/** Specialties kept by name at most per environment (a taxonomy has a few hundred): above it, none are. */
export const KEPT_SPECIALTY_NAMES_MAX = 20_000;

/** The kept reference pages of one application (see the module comment). */
export class KeptReference {
  private readonly pages: LRUCache<string, VersionedPage<unknown>>;
  /** Per environment; `names` null when there were too many to keep at that version. */
  private readonly specialties = new Map<Env, { version: string; names: Map<string, string> | null }>();
  private readonly reading = new Map<Env, Promise<void>>();

  constructor(
    maxRows = KEPT_REFERENCE_MAX_ROWS,
    private readonly maxSpecialtyNames = KEPT_SPECIALTY_NAMES_MAX,
  ) {
    this.pages = new LRUCache({ maxSize: Math.max(1, Math.floor(maxRows)), sizeCalculation: (p) => 1 + p.items.length });
  }

  /** The kept page of `key`, current or not. */
  get<T>(key: string): VersionedPage<T> | undefined {
    return this.pages.get(key) as VersionedPage<T> | undefined;
  }

  /** Keeps `page` under `key`. */
  set<T>(key: string, page: VersionedPage<T>): void {
    this.pages.set(key, page as VersionedPage<unknown>);
  }

  /** The specialty names kept for `env`, of whatever version they were read with. */
  specialtyNames(env: Env): KeptSpecialtyNames | undefined {
    const kept = this.specialties.get(env);
    return kept?.names ? (kept as KeptSpecialtyNames) : undefined;
  }

  /**
   * Reads `env`'s specialty names with the directory version (one statement, one snapshot) and keeps
   * them, when those kept are older than `version` (or none are): a request that saw `version` asks.
   * A read for `env` under way already is waited for instead, and names never replace newer ones.
   * Above `maxSpecialtyNames` (default `KEPT_SPECIALTY_NAMES_MAX`) none are kept, and not read again until the version moves.
   */
  async readSpecialtyNamesOlderThan(db: Db, env: Env, version: string): Promise<void> {
    const kept = this.specialties.get(env);
    if (kept && BigInt(kept.version) >= BigInt(version)) return;
    const under = this.reading.get(env);
    if (under) return under;
    const read = (async () => {
      const specialties = db.selectFrom('specialties').where('env', '=', env);
      // One more than the bound, so that a directory above it is not read whole.
      const r = await readVersionedPage<{ id: string; name: string }>(
        db,
        specialties.select(['id', 'name']).orderBy('id').limit(this.maxSpecialtyNames + 1),
        specialties.select(sql<string>`count(*)`.as('n')),
      );
      const now = this.specialties.get(env);
      if (now && BigInt(now.version) >= BigInt(r.version)) return;
      // Too many to keep: remembered for this version, so that the views compute them without asking again.
      this.specialties.set(env, { version: r.version, names: r.total > this.maxSpecialtyNames ? null : new Map(r.items.map((x) => [x.id, x.name])) });
    })().finally(() => this.reading.delete(env));
    this.reading.set(env, read);
    return read;
  }

  /** Pages kept now. */
  get size(): number {
    return this.pages.size;
  }
}

/** The directory's version now (decimal text). */
async function directoryVersion(db: Db): Promise<string> {
  const { rows } = await sql<{ v: string }>`SELECT version::text AS v FROM directory_version`.execute(db);
  return rows[0]!.v;
}

/**
 * The page `read` reads, from `keep` while the directory version is the one it was read with: one
 * statement (the version) when it is, else `read`'s one statement, whose page is then kept. Without
 * `keep`, `read` alone.
 */
export async function keptPage<T>(db: Db, keep: KeptReference | undefined, key: string, read: () => Promise<VersionedPage<T>>): Promise<VersionedPage<T>> {
  const kept = keep?.get<T>(key);
  if (kept && kept.version === (await directoryVersion(db))) return kept;
  const fresh = await read();
  keep?.set(key, fresh);
  return fresh;
}

/**
 * One statement: the directory version, the total of `count` (a query of one `count(*)` column)
 * and the rows of `page` in id order (each row's columns by name, as JSON: timestamps arrive as ISO
 * text), all from one snapshot.
 */
export async function readVersionedPage<R>(db: Db, page: Compilable, count: Compilable): Promise<VersionedPage<R>> {
  const { rows } = await sql<{ v: string; n: string; items: unknown }>`
    SELECT (SELECT version::text FROM directory_version) AS v, (${count}) AS n,
      (SELECT coalesce(json_agg(t ORDER BY t.id), '[]'::json) FROM (${page}) AS t) AS items`.execute(db);
  const r = rows[0]!;
  return { version: r.v, total: Number(r.n), items: driverJson<R[]>(r.items) ?? [] };
}
