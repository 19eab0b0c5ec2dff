import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { createDeveloper } from '../../src/domain/developers/create-developer.js';
import { inTransaction, retrying } from '../../src/domain/appointments/transactions.js';
import { engineName, freshDatabase, testDatabaseUrl } from '../helpers/db.js';
import { scaled } from '../helpers/scale.js';

/**
 * Issue #8 §5: a serialization failure or deadlock is retried inside the service, never surfaced as
 * a spurious conflict or a 500.
 */
describe(`transaction retries (${engineName})`, () => {
  let h: DatabaseHandle;
  let a: string;
  let b: string;

  beforeAll(async () => {
    h = await freshDatabase();
    a = (await createDeveloper(h.db, { env: 'sandbox', name: 'a' })).developer_id;
    b = (await createDeveloper(h.db, { env: 'sandbox', name: 'b' })).developer_id;
  });
  afterAll(async () => h.close());

  it('retries 40001 and 40P01 until the work succeeds, and nothing else', async () => {
    let calls = 0;
    const flaky = (code: string, failures: number) => async () => {
      calls++;
      if (calls <= failures) throw Object.assign(new Error(`simulated ${code}`), { code });
      return 'done';
    };
    calls = 0;
    expect(await retrying(flaky('40001', 3))).toBe('done');
    expect(calls).toBe(4);
    calls = 0;
    expect(await retrying(flaky('40P01', 2))).toBe('done');
    expect(calls).toBe(3);
    // A taken slot (23P01) or any other error is not retried.
    calls = 0;
    await expect(retrying(flaky('23P01', 1))).rejects.toMatchObject({ code: '23P01' });
    expect(calls).toBe(1);
    // It gives up after its attempts and surfaces the last error.
    calls = 0;
    await expect(retrying(flaky('40001', 100), 3)).rejects.toMatchObject({ code: '40001' });
    expect(calls).toBe(3);
  });

  // A real deadlock: two transactions lock the same two rows in opposite orders. PostgreSQL aborts
  // one with 40P01; `inTransaction` runs it again and both commit. (PGlite runs one transaction at
  // a time, so it cannot deadlock.)
  it.runIf(testDatabaseUrl)('survives a real deadlock between two transactions: both commit', async () => {
    let firstLocks = 0;
    let release!: () => void;
    const bothLocked = new Promise<void>((r) => (release = r));
    let attempts = 0;
    const work = (first: string, second: string, name: string) =>
      inTransaction(h.db, async (trx) => {
        attempts++;
        await trx.updateTable('developers').set({ name: `${name}-1` }).where('id', '=', first).execute();
        if (++firstLocks === 2) release();
        await bothLocked;
        await trx.updateTable('developers').set({ name: `${name}-2` }).where('id', '=', second).execute();
        return name;
      });
    const results = await Promise.all([work(a, b, 'x'), work(b, a, 'y')]);
    expect(results.sort()).toEqual(['x', 'y']);
    // One of them was aborted by the deadlock detector and ran again.
    expect(attempts).toBeGreaterThanOrEqual(3);
    const names = (await h.db.selectFrom('developers').select(['id', 'name']).where('id', 'in', [a, b]).execute()).map((r) => r.name);
    // Each row ends with the second write of whichever transaction committed last; both wrote both rows.
    expect(names.every((n) => /^[xy]-[12]$/.test(n))).toBe(true);
  }, scaled(20_000));
});
