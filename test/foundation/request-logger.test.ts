import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { pino, type Bindings, type ChildLoggerOptions, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/http/logger.js';
import { lazyRequestLogger } from '../../src/http/request-logger.js';

/** A real pino logger writing into `lines`, with `child` counted. */
function counted(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk, _e, cb) { for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>); cb(); } });
  const logger = pino({ ...loggerOptions(level), base: undefined }, sink);
  let children = 0;
  type Child = (this: Logger, b: Bindings, o?: ChildLoggerOptions) => Logger;
  const child = logger.child as unknown as Child;
  // pino's children inherit from their parent object, so this counts every child made below it.
  logger.child = function (this: Logger, b: Bindings, o?: ChildLoggerOptions) { children++; return child.call(this, b, o); } as unknown as Logger['child'];
  return { lines, logger, children: () => children, base: logger as unknown as FastifyBaseLogger };
}

describe("a request's logger made on first use", () => {
  it('makes no child for a request that writes nothing, or only lines below the level', () => {
    const c = counted('info');
    const log = lazyRequestLogger(c.base, { request_id: 'req_1' }, {});
    expect(log.level).toBe('info');
    log.debug({ event: 'x' }, 'below the level');
    log.trace('below the level');
    expect(c.children()).toBe(0);
    expect(c.lines).toEqual([]);
  });

  it('writes through one child carrying the bindings once something is logged, at every level', () => {
    const c = counted('trace');
    const log = lazyRequestLogger(c.base, { request_id: 'req_2' }, {});
    log.info({ event: 'a' }, 'one');
    log.warn('two');
    log.error({ err: new Error('patient Jane') }, 'three');
    log.debug('four');
    log.trace('five');
    log.fatal('six');
    expect(c.children()).toBe(1);
    expect(c.lines.map((l) => [l.level, l.msg, l.request_id])).toEqual([
      [30, 'one', 'req_2'], [40, 'two', 'req_2'], [50, 'three', 'req_2'], [20, 'four', 'req_2'], [10, 'five', 'req_2'], [60, 'six', 'req_2'],
    ]);
    expect(c.lines[0]!.event).toBe('a');
    expect(JSON.stringify(c.lines)).not.toContain('Jane');
  });

  it("keeps a level set on it to itself, and its own children carry its bindings", () => {
    const c = counted('info');
    const log = lazyRequestLogger(c.base, { request_id: 'req_3' }, {});
    log.level = 'debug';
    log.debug('now written');
    expect(c.logger.level).toBe('info');
    log.child({ event: 'nested' }).info('from a child');
    expect(c.lines.map((l) => [l.msg, l.request_id, l.event])).toEqual([['now written', 'req_3', undefined], ['from a child', 'req_3', 'nested']]);
  });

  it('is the service logger itself when logging is off', () => {
    const c = counted('silent');
    expect(lazyRequestLogger(c.base, { request_id: 'req_4' }, {})).toBe(c.base);
  });
});
