/**
 * What a test server and its database were doing when a request got no answer: for tests that send
 * real HTTP requests in parallel (the booking races, idempotency, sign-in throttles, the console's
 * usage), so that a stall says where it stalled (the client never reached the server, the server
 * holds the request, or the request waits in the database) instead of only timing out.
 */
import type { Server } from 'node:http';
import pg from 'pg';
import { testDatabaseUrl } from './db.js';
import { scaled } from './scale.js';

/** Counts of the requests a Node HTTP server has received and answered. */
export interface RequestCounter {
  received: number;
  answered: number;
}

/** Counts `server`'s requests from now on (on the raw server: allowed after the app is listening). */
export function countRequests(server: Server): RequestCounter {
  const c: RequestCounter = { received: 0, answered: 0 };
  server.on('request', (_req, res) => {
    c.received++;
    res.once('finish', () => c.answered++);
  });
  return c;
}

/**
 * One paragraph: the server's counts and open connections and, on PostgreSQL, every other session
 * of the test database (state, what it waits for, for how long, its statement's start) and every
 * lock not granted. Read on a connection of its own (the pool may be what is stuck), bounded in time.
 */
export async function stallReport(server: Server, counter: RequestCounter): Promise<string> {
  const connections = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n ?? -1)));
  const lines = [`server: ${counter.received} requests received, ${counter.answered} answered, ${connections} connections open`];
  if (!testDatabaseUrl) return lines.join('\n');
  const client = new pg.Client({ connectionString: testDatabaseUrl, connectionTimeoutMillis: 5_000, statement_timeout: 5_000 });
  try {
    await client.connect();
    const sessions = await client.query<Record<string, string | null>>(
      `SELECT pid, state, wait_event_type, wait_event, round(extract(epoch FROM now() - state_change)::numeric, 1) AS for_s,
              left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS query
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY state_change`,
    );
    for (const s of sessions.rows) lines.push(`session ${s.pid}: ${s.state} for ${s.for_s} s, waits ${s.wait_event_type ?? '-'}/${s.wait_event ?? '-'}: ${s.query}`);
    const locks = await client.query<Record<string, string | null>>(
      `SELECT pid, locktype, mode, relation::regclass::text AS relation, transactionid::text AS xid FROM pg_locks WHERE NOT granted`,
    );
    for (const l of locks.rows) lines.push(`lock not granted to ${l.pid}: ${l.locktype} ${l.mode} ${l.relation ?? l.xid ?? ''}`);
  } catch (e) {
    lines.push(`database not read: ${(e as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
  return lines.join('\n');
}

/**
 * A `fetch` for requests to `server` that, when a request gets no answer within `withinMs` (15 s,
 * scaled for slow runs; a request answers in well under a second in these tests), fails with
 * `stallReport` instead of waiting for the test's own timeout. Counts the server's requests from now on.
 */
export function fetchReportingStalls(server: Server, withinMs = scaled(15_000)): (url: string, init?: RequestInit) => Promise<Response> {
  const counter = countRequests(server);
  return async (url, init = {}) => {
    try {
      return await fetch(url, { ...init, signal: AbortSignal.timeout(withinMs) });
    } catch (err) {
      if ((err as Error).name !== 'TimeoutError') throw err;
      throw new Error(`no answer to ${init.method ?? 'GET'} ${url} in ${withinMs} ms\n${await stallReport(server, counter)}`);
    }
  };
}
