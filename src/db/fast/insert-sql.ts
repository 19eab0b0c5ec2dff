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
 * A value an insert takes from the row of the statement's `"_guard"` relation instead of from a
 * parameter (`fromGuard`): for a statement whose prelude computes some columns in SQL.
 */
export class GuardColumn {
  constructor(readonly column: string) {}
}

/** A row value read from column `column` of `"_guard"` (see `InsertPrelude`); typed to fit any column. */
export function fromGuard(column: string): never {
  if (!/^[a-z_][a-z0-9_]*$/.test(column)) throw new Error(`fromGuard: not a plain column name: ${column}`);
  return new GuardColumn(column) as never;
}

/**
 * CTEs that come before the inserts and define `"_guard"`: each insert takes one row from it
 * (`INSERT … SELECT … FROM "_guard"`), so nothing is inserted when it has no row. `text` uses
 * `$1…$n` for `values`; `name` stands for it in the memoised shapes. `final` is the statement's
 * closing `SELECT`: the last insert becomes the CTE `"_last"` (its `RETURNING` list as columns), so
 * the statement answers a row even when nothing was inserted.
 */
export interface InsertPrelude {
  name: string;
  values: unknown[];
  text: string;
  final: string;
}

/**
 * Builds `WITH <name> AS (INSERT …), … INSERT … RETURNING <returning>`: every part is one row; the
 * statement is atomic. With a `guard`, each insert is `INSERT … SELECT … WHERE <guard>` (the
 * condition is evaluated once, in the statement's snapshot); with a `prelude` instead, each insert
 * takes its one row from the prelude's `"_guard"` (and `fromGuard` values from its columns). Texts
 * are memoised by shape in `texts` (make one map per application; the shapes are few: which
 * optional columns are present).
 */
export function insertStatement(
  texts: Map<string, string>,
  ctes: [name: string, part: InsertPart][],
  last: InsertPart,
  returning: string,
  guard?: InsertGuard | InsertPrelude,
): CompiledQuery {
  const prelude = guard && 'text' in guard ? guard : undefined;
  const condition = guard && 'condition' in guard ? guard : undefined;
  const params: unknown[] = guard ? [...guard.values] : [];
  let shape = `${guard ? guard.name : ''}|${returning}`;
  /** A part's columns: a name alone takes the next parameter; `[name, column]` takes `"_guard".column`. */
  const columnsOf = (part: InsertPart): (string | [string, string])[] => {
    const r = part.row as Record<string, unknown>;
    const keys: (string | [string, string])[] = [];
    for (const k in r) {
      const v = r[k];
      if (v === undefined) continue;
      if (v instanceof GuardColumn) keys.push([k, v.column]);
      else {
        keys.push(k);
        params.push(v);
      }
    }
    shape += `|${part.table}:${keys.map((k) => (typeof k === 'string' ? k : k.join('='))).join(',')}`;
    return keys;
  };
  const cols = ctes.map(([name, part]) => [name, part.table, columnsOf(part)] as const);
  const lastCols = columnsOf(last);
  let text = texts.get(shape);
  if (text === undefined) {
    let n = guard ? guard.values.length : 0;
    const insert = (table: string, keys: readonly (string | [string, string])[]) => {
      const names = keys.map((k) => ident(typeof k === 'string' ? k : k[0])).join(', ');
      const vals = keys.map((k) => (typeof k === 'string' ? `$${++n}` : `"_guard".${ident(k[1])}`)).join(', ');
      if (prelude) return `INSERT INTO ${ident(table)} (${names}) SELECT ${vals} FROM "_guard"`;
      if (keys.some((k) => typeof k !== 'string')) throw new Error('insertStatement: fromGuard values need a prelude');
      return condition
        ? `INSERT INTO ${ident(table)} (${names}) SELECT ${vals} WHERE EXISTS (SELECT 1 FROM "_guard")`
        : `INSERT INTO ${ident(table)} (${names}) VALUES (${vals})`;
    };
    const withs = cols.map(([name, table, keys]) => `${ident(name)} AS (${insert(table, keys)})`);
    if (prelude) withs.unshift(prelude.text);
    else if (condition) withs.unshift(`"_guard" AS (SELECT 1 WHERE ${condition.condition((i) => `$${i + 1}`)})`);
    const lastInsert = `${insert(last.table, lastCols)} RETURNING ${returning}`;
    text = prelude
      ? `WITH ${[...withs, `"_last" AS (${lastInsert})`].join(', ')} ${prelude.final}`
      : `${withs.length ? `WITH ${withs.join(', ')} ` : ''}${lastInsert}`;
    if (texts.size < 1000) texts.set(shape, text);
  }
  return CompiledQuery.raw(text, params);
}
