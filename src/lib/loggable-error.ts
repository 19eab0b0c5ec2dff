/**
 * What of a thrown error may be logged. Shared by the HTTP error handlers and the background loops.
 */

/**
 * The parts of a thrown error that may be logged: its name, its code (a SQLSTATE or Fastify code)
 * and its stack frames. The message (also the first lines of `stack`) is left out: it can quote
 * request values, such as a patient's name or a rejected database value.
 */
export function loggableError(err: unknown): { name: string; code?: string; stack?: string } {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; stack?: unknown };
  const out: { name: string; code?: string; stack?: string } = { name: typeof e.name === 'string' ? e.name : typeof err };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = String(e.code);
  if (typeof e.stack === 'string') {
    const lines = e.stack.split('\n');
    const firstFrame = lines.findIndex((l) => /^\s+at /.test(l));
    if (firstFrame >= 0) out.stack = lines.slice(firstFrame).join('\n');
  }
  return out;
}
