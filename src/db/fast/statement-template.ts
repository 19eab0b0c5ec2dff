/**
 * A statement written with Kysely's `sql` template, so that it shares its fragments with the rest of
 * the code, but compiled once, when its module loads, instead of on every call
 * (docs/decisions/0012-fast-paths.md). Each call only puts its values in their places. Building and
 * compiling the booking context's statement (src/domain/appointments/booking-context.ts) cost about
 * 30 µs of CPU per booking; with a template it costs nothing.
 *
 * `build` receives one marker per named slot and must use each value only through a marker: a
 * marker passed into a fragment builder (`directoryDurationsJsonSql(p.env, p.reasons)`) takes the
 * place of the value the builder would have been given. The markers are typed `never`, so a builder
 * accepts them whatever its parameter types. A value computed from a marker (`[p.id]`,
 * `new Date(p.from)`) cannot be traced back to a slot and is refused when the template is made, as
 * is any parameter that is neither a marker nor a plain constant.
 */
import { CompiledQuery, createQueryId, PostgresQueryCompiler, type RawBuilder } from 'kysely';

/** A statement compiled once: call it with one value per slot. */
export type StatementTemplate<K extends string> = (values: Record<K, unknown>) => CompiledQuery;

/**
 * Compiles the statement `build` makes from the markers of `slots` (see the module comment) and
 * returns the function that fills it in. Throws when a parameter is neither a marker nor a constant.
 */
export function statementTemplate<const K extends string>(
  slots: readonly K[],
  build: (p: Record<K, never>) => RawBuilder<unknown>,
): StatementTemplate<K> {
  const markers = new Map<object, K>();
  const p = {} as Record<K, never>;
  for (const k of slots) {
    const marker = Object.freeze({ slot: k });
    markers.set(marker, k);
    p[k] = marker as never;
  }
  const compiled = new PostgresQueryCompiler().compileQuery(build(p).toOperationNode(), createQueryId());
  const fill = compiled.parameters.map((v): ((values: Record<K, unknown>) => unknown) => {
    const k = typeof v === 'object' && v !== null ? markers.get(v) : undefined;
    if (k !== undefined) return (values) => values[k];
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) return () => v;
    throw new Error(`statementTemplate: a parameter is neither a slot's marker nor a constant (${JSON.stringify(v)})`);
  });
  const text = compiled.sql;
  return (values) => CompiledQuery.raw(text, fill.map((f) => f(values)));
}
