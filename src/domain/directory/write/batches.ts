/** Batch sizes of the directory write and the helper that splits a list into batches. */

/** Rows per statement of the directory write. */
export const BATCH = 500;

/** Ids per statement when the search rows are refreshed (one `text[]` parameter each). */
export const SEARCH_BATCH = 5000;

/** Splits `rows` into consecutive batches of at most `size`. */
export function chunks<T>(rows: T[], size = BATCH): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}
