/**
 * A `timestamptz` as whole epoch milliseconds (what a JavaScript `Date` holds), computed in SQL.
 *
 * `extract(epoch FROM …)` returns `numeric` since PostgreSQL 14, and numeric arithmetic on every row
 * of a 10,000-row listing measured ~10 % of the statement. `date_part` returns `float8`: its rounding
 * error on a present-day instant is below 2.5e-4 ms, so adding half a microsecond (5e-4 ms) before
 * `floor` gives exactly the truncated millisecond (a timestamp's resolution is 1 µs = 1e-3 ms).
 */
export function epochMsSql(column: string): string {
  return `floor(date_part('epoch', ${column}) * 1000 + 0.0005)`;
}
