/**
 * autocannon `setupRequest` module for scenarios with per-request bodies (bench/harness.ts). Loaded
 * by path inside autocannon's worker thread, where functions from the main thread cannot go: it
 * reads the precomputed bodies from the worker's `workerData` (`opts.carebookBodies`, cloned once
 * per worker) and hands them out in turn, so each request carries the next body.
 */
'use strict';
/* global require, module */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { workerData } = require('node:worker_threads');

const bodies = (workerData && workerData.opts && workerData.opts.carebookBodies) || [];
let next = 0;

module.exports = function setupRequest(req) {
  if (bodies.length === 0) throw new Error('bench/request-bodies.cjs: no carebookBodies in the worker options');
  return { ...req, body: bodies[next++ % bodies.length] };
};
