/**
 * The logger each request carries as `request.log` (docs/operator-guide.md, "Logs"). Most requests
 * write only their one `request completed` line, and that line is written through the service's
 * own logger with `request_id` as a field (src/http/app.ts); so the pino child that would carry the
 * request id is made only when a request logs something else (an event, an error). Making a child
 * for every request cost ~1 % of a cheap read's CPU (docs/performance.md, "The request's logger and a
 * reschedule's writes").
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogCall = (...args: unknown[]) => void;

/** A stand-in for `parent.child(bindings, opts)` that makes the child on first use. */
class LazyChildLogger {
  #child: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly childBindings: Bindings,
    private readonly childOpts: ChildLoggerOptions,
  ) {}

  #real(): Logger {
    return (this.#child ??= this.parent.child(this.childBindings, this.childOpts));
  }

  #write(level: Level, args: unknown[]): void {
    // A line below the level is never written: no child for it.
    if (!this.#child && !this.parent.isLevelEnabled(level)) return;
    (this.#real()[level] as LogCall)(...args);
  }

  get level(): string {
    return this.#child ? this.#child.level : this.parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  isLevelEnabled(level: string): boolean {
    return this.#child ? this.#child.isLevelEnabled(level) : this.parent.isLevelEnabled(level);
  }
  bindings(): Bindings {
    return this.#real().bindings();
  }
  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, opts);
  }
  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}
}

/**
 * Fastify's `childLoggerFactory`: the request's logger, made on first use; with logging off, the
 * service's logger itself (nothing would be written through a child).
 */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  if (logger.level === 'silent') return logger;
  return new LazyChildLogger(logger as unknown as Logger, bindings, opts) as unknown as FastifyBaseLogger;
}
