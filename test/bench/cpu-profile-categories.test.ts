/**
 * The categoriser of bench/profile.ts (docs/performance.md, "Per-request CPU breakdown (issue #20
 * §1)"): a small synthetic V8 profile whose stacks exercise each rule.
 */
import { describe, expect, it } from 'vitest';
import { categorise, frameCategory, shortUrl, type CpuProfile } from '../../bench/cpu-profile-categories.js';

const NM = 'file:///work/main/node_modules';
const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({ id, callFrame: { functionName, url, lineNumber: 0 }, children });

// root ─┬─ (program) 2, (idle) 3, (garbage collector) 4
//       ├─ fastify 5 ─┬─ our route 6 ── kysely 7 ── pg 8 ── node:net 9 ── writev (native) 10
//       │             ├─ node:_http_outgoing 11 ── native 12
//       │             ├─ src/http/logger.ts of an older tree in /tmp 13 ── pino 14 ── node:fs 15
//       │             ├─ src/http/auth-guard.ts 16 ── jose 17
//       │             └─ our route 18 ── JSON.parse (native) 19
//       ├─ node:internal/timers 20 ── native 21
//       ├─ native 22
//       ├─ @electric-sql/pglite 23 ── wasm 24
//       └─ luxon 25 ── node:internal/util 26
const profile: CpuProfile = {
  nodes: [
    frame(1, '(root)', '', [2, 3, 4, 5, 20, 22, 23, 25]),
    frame(2, '(program)', ''),
    frame(3, '(idle)', ''),
    frame(4, '(garbage collector)', ''),
    frame(5, 'runPreParsing', `${NM}/fastify/lib/route.js`, [6, 11, 13, 16, 18]),
    frame(6, 'getAppointment', 'file:///work/wt/x/src/routes/v1/appointments/get.ts', [7]),
    frame(7, 'executeQuery', `${NM}/kysely/dist/esm/query-executor/query-executor-base.js`, [8]),
    frame(8, 'query', `${NM}/pg/lib/client.js`, [9]),
    frame(9, 'Socket._writeGeneric', 'node:net', [10]),
    frame(10, 'writev', ''),
    frame(11, '_storeHeader', 'node:_http_outgoing', [12]),
    frame(12, 'utcDate', ''),
    frame(13, 'logRequest', 'file:///tmp/profile-before-abc/src/http/logger.ts', [14]),
    frame(14, 'write', `${NM}/pino/lib/proto.js`, [15]),
    frame(15, 'writeSync', 'node:fs'),
    frame(16, 'guard', 'file:///work/wt/x/src/http/auth-guard.ts', [17]),
    frame(17, 'jwtVerify', `${NM}/jose/dist/node/esm/jwt/verify.js`),
    frame(18, 'handler', 'file:///work/wt/x/src/domain/appointments/read.ts', [19]),
    frame(19, 'parse', ''),
    frame(20, 'listOnTimeout', 'node:internal/timers', [21]),
    frame(21, 'now', ''),
    frame(22, '(anonymous)', ''),
    frame(23, 'execProtocolRawSync', `${NM}/@electric-sql/pglite/dist/index.js`, [24]),
    frame(24, 'wasm-function[2977]', 'wasm://wasm/01234567'),
    frame(25, 'setZone', `${NM}/luxon/build/es6/luxon.mjs`, [26]),
    frame(26, 'inspect', 'node:internal/util'),
  ],
  // Sample i lasts until sample i + 1 (timeDeltas[i + 1]); the last lasts the median gap (100).
  samples: [2, 3, 4, 10, 12, 15, 17, 19, 21, 22, 24, 26, 10],
  timeDeltas: [0, 100, 500, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100],
};

describe('CPU profile categories', () => {
  it('attributes each sample to the innermost frame a named rule matches, looking through Node and V8 builtins', () => {
    const b = categorise(profile);
    expect(b.us).toEqual({
      program: 100,
      idle: 500,
      GC: 100,
      // 10: writev under node:net under pg (twice: 100, and the last sample's median gap of 100).
      'pg driver': 200,
      // 12: a builtin under node:_http_outgoing under fastify; 21: timers, no named frame at all.
      'Fastify + Node HTTP': 200,
      logging: 100,
      auth: 100,
      'our code': 100,
      other: 100,
      'PGlite engine': 100,
      Luxon: 100,
      Kysely: 0,
      'JSON/serialisation': 0,
    });
    expect(b.busyUs).toBe(1200);
    expect(b.samples).toBe(13);
    expect(b.selfByFunction.get('writev [pg driver]')).toBe(200);
    expect(b.selfByFunction.get('utcDate [Fastify + Node HTTP]')).toBe(100);
    expect(b.selfByFunction.get('setZone luxon/build/es6/luxon.mjs:1')).toBeUndefined();
    expect(b.selfByFunction.get('inspect node:internal/util:1 [Luxon]')).toBe(100);
    expect(b.selfByFunction.has('(idle)')).toBe(false);
  });

  it('names frames by URL, recognising our sources in any tree and leaving Node and builtins to their callers', () => {
    expect(frameCategory(`${NM}/kysely/dist/esm/index.js`, 'compile')).toBe('Kysely');
    expect(frameCategory(`${NM}/fast-json-stringify/lib/serializer.js`, 'asString')).toBe('JSON/serialisation');
    expect(frameCategory(`${NM}/pg-protocol/dist/serializer.js`, 'bind')).toBe('pg driver');
    expect(frameCategory(`${NM}/@pinojs/redact/index.js`, 'redact')).toBe('logging');
    expect(frameCategory('file:///tmp/t/src/http/request-log.ts', 'onResponse')).toBe('logging');
    expect(frameCategory('file:///tmp/t/src/db/pglite-dialect.ts', 'execute')).toBe('our code');
    expect(frameCategory('file:///tmp/t/src/domain/credentials/principal.ts', 'principal')).toBe('auth');
    expect(frameCategory(`${NM}/some-lib/src/http/logger.ts`, 'x')).toBe('other');
    expect(frameCategory('node:internal/stream_base_commons', 'writeGeneric')).toBeUndefined();
    expect(frameCategory('', 'stringify')).toBeUndefined();
    expect(shortUrl(`${NM}/pino/lib/proto.js`)).toBe('pino/lib/proto.js');
    expect(shortUrl('file:///tmp/profile-before-abc/src/http/logger.ts')).toBe('src/http/logger.ts');
  });
});
