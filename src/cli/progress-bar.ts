/** The progress bar of `directory import` on a terminal. */
import type { ImportPhase } from '../domain/directory/import/import-directory.js';

/** A one-line progress bar on a terminal (nothing when stderr is not a TTY). */
export function progressBar(out: NodeJS.WriteStream): { update: (phase: ImportPhase, done: number, total: number) => void; done: () => void } {
  let shown = false;
  let last = 0;
  return {
    update(phase, done, total) {
      if (!out.isTTY) return;
      const now = Date.now();
      if (now - last < 100 && done < total) return;
      last = now;
      const width = 30;
      const frac = total ? Math.min(1, done / total) : 0;
      const filled = Math.round(frac * width);
      out.write(`\r${phase.padEnd(8)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(frac * 100)).padStart(3)}%${total > 1 ? ` ${done}/${total}` : ''}   `);
      shown = true;
    },
    done() {
      if (shown) out.write('\n');
    },
  };
}
