/**
 * One statement, one call into PGlite (docs/performance.md, "The embedded engine's dialect").
 *
 * `PGlite.query()` sends Parse, Describe, Bind, Describe, Execute and Sync as six awaited calls into
 * the engine, and parses and plans the text every time. Here a statement runs as a NAMED prepared
 * statement, kept per PGlite instance (one PostgreSQL session) in a bounded cache: once prepared,
 * Bind + Describe(portal) + Execute + Sync go to the engine in one buffer through
 * `execProtocolRawStream()`, and the answer goes through PGlite's `parseResults()` with the
 * instance's type parsers, so rows, values and errors are those `PGlite.query()` gives.
 *
 * The wire messages are written and read by node-postgres's `pg-protocol`, the package PGlite's own
 * protocol module was forked from: the same messages, at a fifth of the cost per answer (PGlite's
 * copy is compiled with private class fields turned into WeakMap lookups, several per value read). An
 * answer that carries an ErrorResponse is read again with PGlite's parser, so the error thrown is
 * PGlite's own `DatabaseError`, as `PGlite.query()` throws it.
 *
 * The first execution of a text with parameters takes two calls (Parse + Describe(statement) + Sync,
 * then the execution): the parameters are serialized by their types, which only the server knows.
 * A text without parameters is parsed and executed in one call.
 *
 * The caller holds PGlite's locks (see pglite-dialect.ts); nothing here takes them.
 */
import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser.js';
import { wantsGenericPlan, wantsPlanEachTime } from './generic-plan.js';

type BackendMessage = Parameters<Parameters<protocol.Parser['parse']>[1]>[0];
type DatabaseError = InstanceType<typeof protocol.messages.DatabaseError>;

/** Texts longer than this run unnamed (rare, and the least reusable). */
const MAX_TEXT_LENGTH = 16_384;

interface Prepared {
  name: string;
  /** Parameter type OIDs from the server's ParameterDescription. */
  paramTypes: number[];
}

/**
 * The named statements of one PGlite session: SQL text → name and parameter types, least recently
 * used first. Past `max` names, the oldest is closed (its Close message goes with the next call).
 */
export class PreparedStatements {
  readonly #byText = new Map<string, Prepared>();
  #toClose: string[] = [];
  #next = 0;
  /** Parse messages sent so far (for tests and the bench). */
  parses = 0;

  constructor(readonly max = 500) {}

  get size(): number {
    return this.#byText.size;
  }

  /** The statement for `text`, marked as recently used. */
  get(text: string): Prepared | undefined {
    const p = this.#byText.get(text);
    if (p) {
      this.#byText.delete(text);
      this.#byText.set(text, p);
    }
    return p;
  }

  newName(): string {
    return `cbs_${(this.#next++).toString(36)}`;
  }

  remember(text: string, p: Prepared): void {
    this.#byText.set(text, p);
    if (this.#byText.size > this.max) {
      const [oldest, q] = this.#byText.entries().next().value as [string, Prepared];
      this.#byText.delete(oldest);
      this.#toClose.push(q.name);
    }
  }

  /** Drops `text`'s statement and closes it on the server with the next call. */
  forget(text: string): void {
    const p = this.#byText.get(text);
    if (!p) return;
    this.#byText.delete(text);
    this.#toClose.push(p.name);
  }

  /** Names waiting to be closed; the caller gives back those whose Close was not confirmed. */
  takeToClose(): string[] {
    const names = this.#toClose;
    this.#toClose = [];
    return names;
  }

  giveBackToClose(names: string[]): void {
    this.#toClose.unshift(...names);
  }
}

// Keyed by instance, not held by a dialect: names are per session, and several dialects may share
// one PGlite (the test helper opens one per test file over its worker's instance).
const caches = new WeakMap<PGlite, PreparedStatements>();

/** The statement cache of `pglite`'s session, shared by every dialect over that instance. */
export function statementsOf(pglite: PGlite): PreparedStatements {
  let c = caches.get(pglite);
  if (!c) {
    c = new PreparedStatements();
    caches.set(pglite, c);
  }
  return c;
}

/**
 * Runs `text` with `params` and returns what `PGlite.query(text, params)` returns.
 *
 * A named statement keeps the parameter types and result columns it was parsed with. When the
 * tables under it change (DDL, or another `search_path`), PostgreSQL analyses it again and can fail
 * where a fresh parse would not: 0A000 "cached plan must not change result type", a class 42 error
 * (a column's type changed under a parameter of the old type), or 26000 when someone deallocated it.
 * Then the statement is forgotten (closed with the next call) and, outside a transaction
 * (`mayRetry`), parsed again and run once more; a genuine error comes back the same from the fresh
 * parse. Inside a transaction the error is the caller's (the transaction is aborted), and the next
 * run parses afresh.
 */
export async function runStatement<R>(pglite: PGlite, cache: PreparedStatements, text: string, params: readonly unknown[], mayRetry: boolean): Promise<Results<R>> {
  const wasPrepared = cache.get(text) !== undefined;
  try {
    return await runOnce<R>(pglite, cache, text, params);
  } catch (e) {
    if (!wasPrepared || !isStale(e)) throw e;
    cache.forget(text);
    if (!mayRetry) throw e;
    return runOnce<R>(pglite, cache, text, params);
  }
}

async function runOnce<R>(pglite: PGlite, cache: PreparedStatements, text: string, params: readonly unknown[]): Promise<Results<R>> {
  let prepared = cache.get(text);
  // Unnamed: parsed and planned on every execution (long texts; texts marked `plannedEachTime`).
  const named = text.length <= MAX_TEXT_LENGTH && !wantsPlanEachTime(text);
  if (!prepared && params.length === 0) {
    // Nothing to serialize: parse and execute in one call.
    const name = named ? cache.newName() : '';
    cache.parses++;
    const messages = await call(pglite, cache, [serialize.parse({ name, text }), ...execution(name, [])]);
    if (named && messages.some((m) => m.name === 'parseComplete')) cache.remember(text, { name, paramTypes: [] });
    return resultOf<R>(pglite, messages, text, params);
  }
  if (!prepared) {
    const name = named ? cache.newName() : '';
    cache.parses++;
    const described = await call(pglite, cache, [serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]);
    const parsed = described.some((m) => m.name === 'parseComplete');
    prepared = { name, paramTypes: parse.parseDescribeStatementResults(described) };
    if (named && parsed) cache.remember(text, prepared);
    throwFirstError(described, text, params);
  }
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const serializer = pglite.serializers[prepared.paramTypes[i]!];
    return serializer ? serializer(param) : String(param);
  });
  if (!wantsGenericPlan(text)) return resultOf<R>(pglite, await call(pglite, cache, execution(prepared.name, values)), text, params);
  // The plan is chosen at Bind: under force_generic_plan for this execution alone, in the same call.
  const messages = await call(pglite, cache, [FORCE_GENERIC_PLAN, ...execution(prepared.name, values), RESET_PLAN_MODE]);
  throwFirstError(messages, text, params);
  return resultOf<R>(pglite, middleAnswer(messages), text, params);
}

function execution(statement: string, values: (string | null)[]): Buffer[] {
  return [serialize.bind({ statement, values }), serialize.describe({ type: 'P' }), serialize.execute(), serialize.sync()];
}

/**
 * `SET plan_cache_mode = force_generic_plan` and `RESET plan_cache_mode`, as simple queries around a
 * marked statement's Bind (src/db/generic-plan.ts), serialized once. Inside a transaction the SET is
 * part of it: if the statement fails, the RESET after it fails too (the transaction is aborted), and
 * the rollback that must follow undoes the SET. Outside one, each simple query is its own transaction
 * and the RESET runs whatever happened.
 */
const FORCE_GENERIC_PLAN: Buffer = serialize.query('SET plan_cache_mode = force_generic_plan');
const RESET_PLAN_MODE: Buffer = serialize.query('RESET plan_cache_mode');

/** The statement's own answer among the three (SET, statement, RESET), each ended by ReadyForQuery. */
function middleAnswer(messages: BackendMessage[]): BackendMessage[] {
  const first = messages.findIndex((m) => m.name === 'readyForQuery');
  const second = messages.findIndex((m, i) => i > first && m.name === 'readyForQuery');
  return messages.slice(first + 1, second + 1);
}

/**
 * The answer's sink: each chunk copied into `chunks`. Made by a factory because the service runs
 * through tsx, whose transform names every closure written inline as an object property with a
 * property definition per call (`__name`, 0.5–1.3 % of an embedded read's profile samples).
 */
const copiesInto =
  (chunks: Buffer[]) =>
  (chunk: Uint8Array): void =>
    void chunks.push(Buffer.from(chunk));

/** One call into the engine: pending Closes, then `messages`, in one buffer; returns the answer's messages. */
async function call(pglite: PGlite, cache: PreparedStatements, messages: Buffer[]): Promise<BackendMessage[]> {
  const closing = cache.takeToClose();
  const parts = closing.length ? [...closing.map((name) => serialize.close({ type: 'S', name })), ...messages] : messages;
  const chunks: Buffer[] = [];
  let out: BackendMessage[] = [];
  try {
    // The streaming form hands each chunk of the answer over as it is written (a view of the
    // engine's memory, so it is copied). The plain `execProtocolRaw()` would also parse every
    // message into PGlite's own list of results, which only `execProtocol()` empties.
    await pglite.execProtocolRawStream(parts.length === 1 ? parts[0]! : Buffer.concat(parts), { syncToFs: false, onRawData: copiesInto(chunks) });
    out = messagesOf(chunks);
  } finally {
    const closed = out.filter((m) => m.name === 'closeComplete').length;
    if (closed < closing.length) cache.giveBackToClose(closing.slice(closed));
  }
  return out;
}

/** The answer's messages; with an ErrorResponse among them, as PGlite's own parser gives them (its error class). */
function messagesOf(chunks: Buffer[]): BackendMessage[] {
  const answer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  const out: BackendMessage[] = [];
  let failed = false;
  new Parser().parse(answer, (m) => {
    if (m.name === 'error') failed = true;
    out.push(m as unknown as BackendMessage);
  });
  if (!failed) return out;
  const own: BackendMessage[] = [];
  new protocol.Parser().parse(answer, (m) => own.push(m));
  return own;
}

function resultOf<R>(pglite: PGlite, messages: BackendMessage[], text: string, params: readonly unknown[]): Results<R> {
  throwFirstError(messages, text, params);
  return parse.parseResults(messages, pglite.parsers)[0] as Results<R>;
}

/** Throws the first ErrorResponse as `PGlite.query()` does: the protocol's DatabaseError, with the query and its parameters. */
function throwFirstError(messages: BackendMessage[], text: string, params: readonly unknown[]): void {
  const err = messages.find((m): m is DatabaseError => m.name === 'error');
  if (!err) return;
  Object.assign(err, { query: text, params, queryOptions: undefined });
  throw err;
}

/** An error a named statement can raise because it was parsed against an older schema (see runStatement). */
function isStale(e: unknown): boolean {
  const err = e as Partial<DatabaseError>;
  if (err?.name !== 'error' || typeof err.code !== 'string') return false;
  return err.code === '26000' || err.code.startsWith('42') || (err.code === '0A000' && /cached plan must not change result type/.test(err.message ?? ''));
}
