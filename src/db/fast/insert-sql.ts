/**
 * `INSERT` statements as raw SQL, for the booking hot path: Kysely's query builder costs about half
 * a millisecond of CPU to build and compile a five-table insert, and even the `sql` tag compiles its
 * fragments on every call. `insertStatement` builds the text once per shape (tables and their
 * column lists) and afterwards only collects the parameters. The values are the same typed rows the
 * builder takes and travel as the same parameters; columns whose value is `undefined` are left out
 * (as the builder does).
 */
import { CompiledQuery, type Insertable } from 'kysely';
import type { Database } from '../schema.js';

/** One row for one table. */
export interface InsertPart<T extends keyof Database & string = keyof Database & string> {
  table: T;
  row: Insertable<Database[T]>;
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * A condition every insert of the statement waits on: when it is false nothing is inserted and the
 * statement returns no row. `condition` writes it with `param(i)` for `values[i]`; `name` stands for
 * the condition's text in the memoised shapes.
 */
export interface InsertGuard {
  name: string;
  values: unknown[];
  condition: (param: (i: number) => string) => string;
}

/**
 * Builds `WITH <name> AS (INSERT …), … INSERT … RETURNING <returning>`: every part is one row; the
 * statement is atomic. With a `guard`, each insert is `INSERT … SELECT … WHERE <guard>` (the
 * condition is evaluated once, in the statement's snapshot). Texts are memoised by shape in `texts`
 * (make one map per application; the shapes are few: which optional columns are present).
 */
export function insertStatement(
  texts: Map<string, string>,
  ctes: [name: string, part: InsertPart][],
  last: InsertPart,
  returning: string,
  guard?: InsertGuard,
): CompiledQuery {
  const params: unknown[] = guard ? [...guard.values] : [];
  let shape = `${guard ? guard.name : ''}|${returning}`;
  const columnsOf = (part: InsertPart): string[] => {
    const r = part.row as Record<string, unknown>;
    const keys: string[] = [];
    for (const k in r) {
      if (r[k] === undefined) continue;
      keys.push(k);
      params.push(r[k]);
    }
    shape += `|${part.table}:${keys.join(',')}`;
    return keys;
  };
  const cols = ctes.map(([name, part]) => [name, part.table, columnsOf(part)] as const);
  const lastCols = columnsOf(last);
  let text = texts.get(shape);
  if (text === undefined) {
    let n = guard ? guard.values.length : 0;
    const insert = (table: string, keys: readonly string[]) =>
      guard
        ? `INSERT INTO ${ident(table)} (${keys.map(ident).join(', ')}) SELECT ${keys.map(() => `$${++n}`).join(', ')} WHERE EXISTS (SELECT 1 FROM "_guard")`
        : `INSERT INTO ${ident(table)} (${keys.map(ident).join(', ')}) VALUES (${keys.map(() => `$${++n}`).join(', ')})`;
    const withs = cols.map(([name, table, keys]) => `${ident(name)} AS (${insert(table, keys)})`);
    if (guard) withs.unshift(`"_guard" AS (SELECT 1 WHERE ${guard.condition((i) => `$${i + 1}`)})`);
    text = `${withs.length ? `WITH ${withs.join(', ')} ` : ''}${insert(last.table, lastCols)} RETURNING ${returning}`;
    if (texts.size < 1000) texts.set(shape, text);
  }
  return CompiledQuery.raw(text, params);
}
