/**
 * Per-file timeouts scaled by the start-up this run measured (test/helpers/global-setup.ts): on a busy
 * machine, opening a database and starting the app can take many times what it takes on an idle one,
 * and a fixed timeout shorter than one start-up fails tests that are not wrong. The base values are
 * what an idle machine needs with a wide margin; tests that set their own use `scaled()`.
 */
import { vi } from 'vitest';
import { scaled } from './scale.js';

vi.setConfig({ testTimeout: scaled(30_000), hookTimeout: scaled(60_000) });
