/**
 * What every command of the operator's command line uses: the program's `--url`/`--admin-token`,
 * integer arguments, the database, printing, and usage errors.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

/** The configuration, loaded when a command runs (not when the program is built). */
export type ConfigSource = () => Config;

/** The program's options for acting through a running service's admin API. */
export interface RemoteOpts {
  url?: string;
  adminToken?: string;
}

/** A Commander argument parser for an integer from `min` to `max`; `name` names the option in the error. */
export function intArg(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
}

/** Runs `fn` against the configured database, migrated, and closes it afterwards. */
export async function withDb<T>(config: Config, fn: (db: Awaited<ReturnType<typeof openDatabase>>['db']) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, preparedStatements: config.preparedStatements });
  try {
    await migrateToLatest(handle.db);
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

/** Prints `value` as indented JSON with `json`, else the `human` text; one line feed after either. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** The program's own `--url`/`--admin-token` (a subcommand may have an option named `--url` too). */
export function remote(cmd: Command): RemoteOpts {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.opts() as RemoteOpts;
}

/**
 * A usage error found by a command's action (after parsing): printed like any other error. Commander's
 * own errors are printed by Commander itself before it throws, which is why `main` prints no
 * `CommanderError`; an `InvalidArgumentError` thrown from an action would exit silently.
 */
export class UsageError extends Error {}
