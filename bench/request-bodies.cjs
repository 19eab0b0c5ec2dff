/**
 * autocannon `setupRequest` module for scenarios with per-request bodies or paths (bench/harness.ts).
 * Loaded by path inside autocannon's worker thread, where functions from the main thread cannot go:
 * it reads the precomputed lists from the worker's `workerData` (`opts.carebookBodies`,
 * `opts.carebookPaths`, cloned once per worker) and hands them out in turn, so each request carries
 * the next body and/or goes to the next path.
 */
'use strict';
/* global require, module */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { workerData } = require('node:worker_threads');

const opts = (workerData && workerData.opts) || {};
const bodies = opts.carebookBodies || [];
const paths = opts.carebookPaths || [];
let nextBody = 0;
let nextPath = 0;

module.exports = function setupRequest(req) {
  if (bodies.length === 0 && paths.length === 0) throw new Error('bench/request-bodies.cjs: no carebookBodies or carebookPaths in the worker options');
  const out = { ...req };
  if (bodies.length) out.body = bodies[nextBody++ % bodies.length];
  if (paths.length) out.path = paths[nextPath++ % paths.length];
  return out;
};
