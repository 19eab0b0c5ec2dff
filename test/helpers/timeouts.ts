/**
 * Per-file timeouts scaled by the start-up this run measured (test/helpers/global-setup.ts): on a busy
 * machine, opening a database and starting the app can take many times what it takes on an idle one,
 * and a fixed timeout shorter than one start-up fails tests that are not wrong. The base values are
 * what an idle machine needs with a wide margin.
 */
import { inject, vi } from 'vitest';

const scale = inject('timeoutScale');
vi.setConfig({ testTimeout: Math.round(30_000 * scale), hookTimeout: Math.round(60_000 * scale) });
