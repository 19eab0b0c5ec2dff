/**
 * Telling a database that cannot be reached (down, restarting, refusing connections) from one that
 * refused a statement: the first is answered 503 with `Retry-After`, not 500.
 */

/** Connection-level database failures (server down, restarting). */
export function isDatabaseUnavailable(err: { code?: string; message?: string }): boolean {
  const code = err.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P02', '57P03', '08000', '08003', '08006'].includes(code) ||
    /Connection terminated|timeout exceeded when trying to connect/i.test(err.message ?? '')
  );
}
