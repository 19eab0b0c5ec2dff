/**
 * Opens the database: embedded PGlite in a data directory, or PostgreSQL through a pool. Both speak
 * the same SQL; the rest of the code sees only `Kysely<Database>`.
 */
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import { Kysely, PostgresDialect, sql, type Dialect } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { StatementNames, useNamedStatements } from './fast/prepared-statements.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  engine: 'pglite' | 'postgres';
  /** The PGlite instance when embedded (for dumps in tests), else undefined. */
  pglite?: PGlite;
  /** PostgreSQL: the connection pool's counts now (for `/metrics`); undefined on the embedded engine, which has one session. */
  poolStats?: () => PoolStats;
  close(): Promise<void>;
}

/** A PostgreSQL connection pool at one moment (`DATABASE_POOL_SIZE`; docs/operator-guide.md, "Install and run"). */
export interface PoolStats {
  /** The most connections the pool opens. */
  size: number;
  /** Connections open now, in use or idle. */
  open: number;
  /** Open connections no statement or transaction holds. */
  idle: number;
  /** Statements and transactions waiting for a connection. */
  waiting: number;
}

// PostgreSQL type OIDs whose text form we keep as text: date, timestamp (without zone).
const KEEP_AS_TEXT = [1082, 1114];

export interface OpenOptions {
  databaseUrl?: string | undefined;
  dataDir?: string;
  /** For PGlite: start from a dumped data directory (tests load a migrated template this way). */
  loadDataDir?: Blob;
  /** For PGlite: keep everything in memory. */
  inMemory?: boolean;
  /** For PostgreSQL: schema to put first on the search_path (tests isolate themselves this way). */
  schema?: string;
  poolSize?: number;
  /** For PostgreSQL: run parameterized statements as named, prepared statements (default true; see fast/prepared-statements.ts). */
  preparedStatements?: boolean;
  /** For PostgreSQL: the `application_name` the connections report (`pg_stat_activity`). */
  applicationName?: string;
  /** For PostgreSQL: give up opening a connection after this long (default: wait as long as the server takes). */
  connectTimeoutMs?: number;
  /** Wraps the dialect (a benchmark counts and times statements and transactions this way: bench/statement-meter.ts). */
  wrapDialect?: (dialect: Dialect) => Dialect;
}

/** Opens PGlite or PostgreSQL per the options (docs/api/deployment.md#storage). */
export async function openDatabase(opts: OpenOptions): Promise<DatabaseHandle> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts);
  return openPGlite(opts);
}

async function openPGlite(opts: OpenOptions): Promise<DatabaseHandle> {
  let dataDir: string | undefined;
  if (!opts.inMemory) {
    dataDir = opts.dataDir ?? './data';
    await mkdir(dataDir, { recursive: true });
    dataDir = `${dataDir.replace(/\/+$/, '')}/pglite`;
  }
  const parsers = Object.fromEntries(KEEP_AS_TEXT.map((oid) => [oid, (v: string) => v]));
  const pglite = await PGlite.create({
    ...(dataDir ? { dataDir } : {}),
    ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
    extensions: { btree_gist },
    parsers,
  });
  const dialect = new PGliteDialect(pglite);
  const db = new Kysely<Database>({ dialect: opts.wrapDialect ? opts.wrapDialect(dialect) : dialect });
  return {
    db,
    engine: 'pglite',
    pglite,
    close: () => db.destroy(),
  };
}

/**
 * `url` without its `options` parameter, and that parameter's value: the server options a URL may
 * carry (e.g. `?options=-c%20search_path%3Dcarebook`) are kept and sent with ours, rather than
 * one replacing the other.
 */
function splitOptions(url: string): { url: string; options: string } {
  const u = new URL(url);
  const options = u.searchParams.get('options') ?? '';
  u.searchParams.delete('options');
  return { url: u.toString(), options };
}

async function openPostgres(given: string, opts: OpenOptions): Promise<DatabaseHandle> {
  const { schema, wrapDialect: wrap } = opts;
  const prepared = opts.preparedStatements ?? true;
  const { url, options } = splitOptions(given);
  const size = opts.poolSize ?? 10;
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    ...(opts.applicationName ? { application_name: opts.applicationName } : {}),
    ...(opts.connectTimeoutMs ? { connectionTimeoutMillis: opts.connectTimeoutMs } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        KEEP_AS_TEXT.includes(oid) ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
    // JIT compilation costs 60–90 ms on the larger directory queries and gains nothing on these
    // short OLTP statements.
    options: [options, '-c jit=off', schema ? `-c search_path="${schema}",public` : ''].filter(Boolean).join(' '),
  });
  // A connection error (e.g. the server shutting down: FATAL 57P01) must not crash the process. The
  // pool listens on idle clients only and drops that listener while a client is checked out, so a
  // client that loses its server mid-transaction or between two statements would emit an unhandled
  // 'error' event; every client gets its own listener. The statement in flight still fails with its
  // own error (503 to the caller), and the pool discards the broken client when it is released.
  pool.on('error', () => undefined);
  const names = prepared ? new StatementNames() : undefined;
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    if (names) useNamedStatements(client, names);
  });
  const dialect = new PostgresDialect({ pool });
  const db = new Kysely<Database>({ dialect: wrap ? wrap(dialect) : dialect });
  return {
    db,
    engine: 'postgres',
    poolStats: () => ({ size, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}

/** True when the database answers a trivial query. */
export async function ping(db: Db): Promise<boolean> {
  try {
    await sql`SELECT 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
