import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { engineName, freshDatabase } from '../helpers/db.js';

describe(`storage on ${engineName}: concurrent transactions`, () => {
  let h: DatabaseHandle;
  beforeEach(async () => {
    h = await freshDatabase();
    await h.db
      .insertInto('developers')
      .values({ id: 'dv_base', env: 'sandbox', name: 'base' })
      .execute();
  });
  afterEach(async () => h.close());

  it('keeps a committing transaction and drops a rolling-back one when they overlap', async () => {
    let releaseA!: () => void;
    const aMayFinish = new Promise<void>((r) => (releaseA = r));
    const a = h.db.transaction().execute(async (trx) => {
      await trx.insertInto('developers').values({ id: 'dv_commit', env: 'sandbox', name: 'commit' }).execute();
      await aMayFinish;
      await trx.updateTable('developers').set({ name: 'committed' }).where('id', '=', 'dv_commit').execute();
    });
    const b = h.db.transaction().execute(async (trx) => {
      await trx.insertInto('developers').values({ id: 'dv_rollback', env: 'sandbox', name: 'rb' }).execute();
      throw new Error('roll me back');
    });
    // A plain statement issued while the transactions are open must not join either of them.
    const plain = h.db.insertInto('developers').values({ id: 'dv_plain', env: 'sandbox', name: 'plain' }).execute();
    setTimeout(releaseA, 20);
    const [ra, rb, rp] = await Promise.allSettled([a, b, plain]);
    expect(ra.status).toBe('fulfilled');
    expect(rb.status).toBe('rejected');
    expect(rp.status).toBe('fulfilled');
    const rows = await h.db.selectFrom('developers').select(['id', 'name']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'dv_base', name: 'base' },
      { id: 'dv_commit', name: 'committed' },
      { id: 'dv_plain', name: 'plain' },
    ]);
  });

  it('runs many interleaved transactions without losing a commit', async () => {
    const n = 40;
    const results = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        h.db.transaction().execute(async (trx) => {
          await trx.insertInto('developers').values({ id: `dv_${i}`, env: 'sandbox', name: `n${i}` }).execute();
          await new Promise((r) => setTimeout(r, i % 3));
          if (i % 4 === 0) throw new Error('rollback');
        }),
      ),
    );
    const committed = results.filter((r) => r.status === 'fulfilled').length;
    expect(committed).toBe(n - n / 4);
    const { count } = await h.db
      .selectFrom('developers')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('id', 'like', 'dv\\_%')
      .where('id', '!=', 'dv_base')
      .executeTakeFirstOrThrow();
    expect(Number(count)).toBe(committed);
    const version = await sql<{ v: string }>`SELECT current_setting('server_version_num') AS v`.execute(h.db);
    expect(Number(version.rows[0]!.v)).toBeGreaterThan(150000);
  });
});
