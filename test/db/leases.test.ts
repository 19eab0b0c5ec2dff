/**
 * Leases of background passes (src/db/leases.ts, migration 0029), on the engine under test: taken
 * by one holder at a time (of many asking at once, one), renewed, lost once expired and taken by
 * another, taken over by a process that alone can open the database, given up whatever the work
 * did; and a pass holding one keeps no pooled connection between its statements (PostgreSQL).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { releaseLease, renewLease, takeLease, withLease } from '../../src/db/leases.js';
import { maintainTables } from '../../src/db/table-maintenance.js';
import { refreshAvailabilitySummaries } from '../../src/domain/availability/summary-refresh.js';
import { engineName, freshDatabase, testDatabaseUrl } from '../helpers/db.js';

const MINUTE = { ttlMs: 60_000 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(`leases (${engineName})`, () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await freshDatabase();
  });
  afterAll(async () => {
    await h.close();
  });
  beforeEach(async () => {
    await h.db.deleteFrom('job_leases').execute();
  });
  const holders = async () => (await h.db.selectFrom('job_leases').select(['name', 'holder']).orderBy('name').execute()).map((r) => `${r.name}:${r.holder}`);

  it('one holder at a time: a held lease refuses others, its holder may take it again, and it is free once given up', async () => {
    expect(await takeLease(h.db, 'pass', 'a', MINUTE)).toBe(true);
    expect(await takeLease(h.db, 'pass', 'b', MINUTE)).toBe(false);
    expect(await takeLease(h.db, 'pass', 'a', MINUTE)).toBe(true);
    expect(await takeLease(h.db, 'other pass', 'b', MINUTE)).toBe(true);
    expect(await holders()).toEqual(['other pass:b', 'pass:a']);
    await releaseLease(h.db, 'pass', 'b'); // not b's: nothing
    expect(await holders()).toEqual(['other pass:b', 'pass:a']);
    await releaseLease(h.db, 'pass', 'a');
    expect(await takeLease(h.db, 'pass', 'b', MINUTE)).toBe(true);
  });

  it('of many processes asking at once, exactly one gets it', async () => {
    const asks = await Promise.all(Array.from({ length: 20 }, (_, i) => takeLease(h.db, 'raced', `p${i}`, MINUTE)));
    expect(asks.filter(Boolean)).toHaveLength(1);
    expect(await holders()).toEqual([`raced:p${asks.indexOf(true)}`]);
  });

  it('an expired lease is free for another holder; the one who lost it can no longer renew it', async () => {
    expect(await takeLease(h.db, 'pass', 'a', { ttlMs: 300 })).toBe(true);
    expect(await takeLease(h.db, 'pass', 'b', MINUTE)).toBe(false);
    await sleep(350);
    expect(await takeLease(h.db, 'pass', 'b', MINUTE)).toBe(true);
    expect(await renewLease(h.db, 'pass', 'a', 60_000)).toBe(false);
    expect(await renewLease(h.db, 'pass', 'b', 60_000)).toBe(true);
  });

  it('a renewal keeps a lease that would have expired', async () => {
    expect(await takeLease(h.db, 'pass', 'a', { ttlMs: 1_000 })).toBe(true);
    await sleep(500);
    expect(await renewLease(h.db, 'pass', 'a', 1_000)).toBe(true);
    await sleep(700); // 1,200 ms after the take, 700 after the renewal
    expect(await takeLease(h.db, 'pass', 'b', MINUTE)).toBe(false);
  });

  it('soleProcess (the embedded engine) takes over a lease another holder left', async () => {
    expect(await takeLease(h.db, 'pass', 'dead process', MINUTE)).toBe(true);
    expect(await takeLease(h.db, 'pass', 'b', { ...MINUTE, soleProcess: true })).toBe(true);
    expect(await holders()).toEqual(['pass:b']);
  });

  it('withLease: runs the work holding the lease and gives it up after, also when the work fails; refused, it runs nothing', async () => {
    const seen = await withLease(h.db, 'pass', MINUTE, async (lease) => {
      expect(await holders()).toEqual([`pass:${lease.holder}`]);
      expect(await lease.keep()).toBe(true);
      return 'done';
    });
    expect(seen).toBe('done');
    expect(await holders()).toEqual([]);
    await expect(withLease(h.db, 'pass', MINUTE, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await holders()).toEqual([]);
    expect(await takeLease(h.db, 'pass', 'other', MINUTE)).toBe(true);
    let ran = false;
    expect(await withLease(h.db, 'pass', MINUTE, async () => (ran = true))).toBeUndefined();
    expect(ran).toBe(false);
  });

  it('keep() renews once a third of the lease has gone, and answers false once another holder took it', async () => {
    await withLease(h.db, 'pass', { ttlMs: 1_000 }, async (lease) => {
      await sleep(400);
      expect(await lease.keep()).toBe(true); // renewed: 1 s from now
      await sleep(700); // past the first expiry, within the renewed one
      expect(await takeLease(h.db, 'pass', 'other', MINUTE)).toBe(false);
      await sleep(500); // past the renewed expiry
      expect(await takeLease(h.db, 'pass', 'other', MINUTE)).toBe(true);
      expect(await lease.keep()).toBe(false);
    });
    // The work's end gave up nothing of the other holder's.
    expect(await holders()).toEqual(['pass:other']);
  });
});

describe.skipIf(!testDatabaseUrl)('a pass holding a lease keeps no connection between its statements (postgres)', () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await freshDatabase({ poolSize: 1 });
  });
  afterAll(async () => {
    await h.close();
  });

  // With one connection in the pool, a statement sent while a pass runs gets the connection as soon
  // as the pass's current statement ends (the pool serves its waiters in order): it is answered
  // before the pass ends. A pass keeping its connection (as with a session lock) would answer it after.
  for (const [name, pass] of [
    ['the summary refresh', (db: DatabaseHandle['db']) => refreshAvailabilitySummaries(db, { env: 'sandbox' })],
    ['table maintenance', (db: DatabaseHandle['db']) => maintainTables(db)],
  ] as const) {
    it(name, async () => {
      let passEnded = false;
      const running = pass(h.db).then(() => (passEnded = true));
      await sql`SELECT 1`.execute(h.db);
      expect(passEnded).toBe(false);
      await running;
      expect(await h.db.selectFrom('job_leases').selectAll().execute()).toEqual([]);
    });
  }
});
