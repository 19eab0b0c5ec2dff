/** The shapes of the OpenAPI document's hand-written examples (src/http/openapi-examples.ts and its per-area files). */

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Hand-written examples for one operation. */
export interface OperationExamples {
  /** Request body example (for the operation's first request media type). */
  request?: Json;
  /** Success response example (for the operation's first success status). */
  response?: Json;
  /** A summary for operations whose route schema has none. */
  summary?: string;
}
