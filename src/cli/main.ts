/**
 * `carebook` — the operator's command line (contracts.md §2). Each command works directly on the
 * database (the service must be stopped when it is embedded PGlite), or, with `--url` and
 * `--admin-token`, through a running service's admin API.
 */
import cluster from 'node:cluster';
import { readFile, writeFile } from 'node:fs/promises';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { keyEncryptionOf, kekId, withKeyEncryption } from '../auth/key-encryption.js';
import { KeyStore } from '../auth/signing-keys.js';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { createDeveloper } from '../domain/developers/create-developer.js';
import { importDirectory, type ImportPhase } from '../domain/directory/import/import-directory.js';
import { documentToNdjson } from '../domain/directory/import/ndjson.js';
import type { ImportError } from '../domain/directory/import/parse.js';
import { generateDirectory } from '../domain/directory/seed.js';
import { seedDirectory } from '../domain/directory/seed-directory.js';
import { createUser } from '../domain/users/create-user.js';
import { operatorTransition } from '../domain/appointments/operator-transition.js';
import { startClusterPrimary } from '../cluster.js';
import { startService, startWorkerProcess } from '../server.js';
import { adminCall } from './admin-client.js';
import { addWebhookCommands } from './webhook-commands.js';
import { addConfigCommand } from './commands/config.js';

interface RemoteOpts {
  url?: string;
  adminToken?: string;
}

function intArg(name: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
}

/**
 * Shuts a starting or running process down gracefully on SIGINT/SIGTERM, then exits 0.
 *
 * The handlers go in before `starting` is awaited: a signal that arrives while the service starts
 * (or in the instant after it announces itself) waits for the start and then closes, instead of
 * meeting the default disposition and killing the process mid-write.
 */
export async function closeOnSignal(starting: Promise<{ close(): Promise<void> }>): Promise<void> {
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    void starting.then((s) => s.close()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await starting;
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

export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human}\n`);
}

/** The program's own `--url`/`--admin-token` (a subcommand may have an option named `--url` too). */
export function remote(cmd: Command): RemoteOpts {
  let root = cmd;
  while (root.parent) root = root.parent;
  return root.opts() as RemoteOpts;
}

export function buildCli(env: Record<string, string | undefined>): Command {
  const program = new Command('carebook')
    .description('Carebook operator tool')
    .option('--url <url>', 'act through a running service at this address (admin API)')
    .option('--admin-token <token>', 'admin token for --url (default: $ADMIN_TOKEN)', env.ADMIN_TOKEN)
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError();
  const config = (): Config => loadConfig(env);

  program
    .command('serve')
    .description('start the API and auth server (and the background workers, unless --no-workers)')
    .option('--no-workers', 'serve HTTP only; run `carebook worker` processes for the background work')
    .option('--processes <n>', 'API processes sharing the port, one per core is typical (needs DATABASE_URL)', intArg('--processes', 1, 64), 1)
    .action(async (o: { workers: boolean; processes: number }) => {
      const cfg = config();
      if (o.processes > 1 && cluster.isPrimary) {
        if (!cfg.databaseUrl) throw new UsageError('--processes needs DATABASE_URL: the embedded database admits one process');
        await startClusterPrimary(cfg, { processes: o.processes });
        return;
      }
      await closeOnSignal(startService(cfg, { workers: o.workers, announce: cluster.isPrimary }));
    });

  program
    .command('worker')
    .description('run the background workers only (booking evaluation, webhook delivery); several may run at once')
    .action(async () => {
      const cfg = config();
      if (!cfg.databaseUrl) throw new Error('worker needs DATABASE_URL: the embedded database admits one process (`serve` runs the workers itself)');
      await closeOnSignal(startWorkerProcess(cfg));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const applied = await withDb(config(), async () => []);
      void applied;
      process.stdout.write('migrations are current\n');
    });

  const developer = program.command('developer').description('onboard developers');
  developer
    .command('create')
    .requiredOption('--name <name>', 'display name')
    .option('--redirect-uri <uri>', 'redirect URI of the user client (repeatable)', (v: string, prev: string[]) => [...prev, v], [] as string[])
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; redirectUri: string[]; json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const result = r.url
        ? await adminCall(r, 'POST', '/developers', { name: opts.name, redirect_uris: opts.redirectUri })
        : await withDb(config(), (db) => createDeveloper(db, { env: config().appEnv, name: opts.name, redirectUris: opts.redirectUri }));
      const d = result as Record<string, string>;
      print(!!opts.json, d, `developer_id   ${d.developer_id}\nclient_id      ${d.client_id}\nclient_secret  ${d.client_secret}\nuser_client_id ${d.user_client_id}`);
    });

  program
    .command('user')
    .description('logins for the authorization code flow')
    .command('create')
    .requiredOption('--email <email>')
    .requiredOption('--password <password>')
    .requiredOption('--role <role>', 'patient or provider')
    .option('--provider-id <id>', 'the provider this login belongs to (role provider)')
    .option('--json', 'print JSON')
    .action(async (opts: { email: string; password: string; role: string; providerId?: string; json?: boolean }, cmd: Command) => {
      if (opts.role !== 'patient' && opts.role !== 'provider') throw new UsageError('--role must be patient or provider');
      const role = opts.role;
      const r = remote(cmd);
      const result = r.url
        ? await adminCall(r, 'POST', '/users', { email: opts.email, password: opts.password, role, ...(opts.providerId ? { provider_id: opts.providerId } : {}) })
        : await withDb(config(), (db) => createUser(db, { env: config().appEnv, email: opts.email, password: opts.password, role, providerId: opts.providerId ?? null }));
      const u = result as Record<string, string>;
      print(!!opts.json, u, `user_id ${u.user_id} (${u.role})`);
    });

  const directory = program.command('directory').description('load the provider directory');
  directory
    .command('seed')
    .requiredOption('--providers <n>', 'number of providers', intArg('--providers', 1, 100000))
    .option('--seed <s>', 'random seed (same seed, same directory)', intArg('--seed', 0, 2 ** 31 - 1))
    .option('--developer <id>', 'add the generated provider-locations to this developer\'s directory')
    .option('--out <file>', 'write the generated document to FILE (JSON, or NDJSON when FILE ends in .ndjson) instead of loading it')
    .option('--json', 'print JSON')
    .action(async (opts: { providers: number; seed?: number; developer?: string; out?: string; json?: boolean }, cmd: Command) => {
      if (opts.out) {
        const doc = generateDirectory(opts.providers, opts.seed ?? 1);
        await writeFile(opts.out, /\.(ndjson|jsonl)$/.test(opts.out) ? documentToNdjson(doc) : `${JSON.stringify(doc, null, 1)}\n`);
        print(!!opts.json, { file: opts.out, provider_locations: doc.provider_locations?.length ?? 0 }, `wrote ${opts.out}: ${doc.providers?.length ?? 0} providers, ${doc.provider_locations?.length ?? 0} provider-locations`);
        return;
      }
      const r = remote(cmd);
      const body = { providers: opts.providers, ...(opts.seed !== undefined ? { seed: opts.seed } : {}), ...(opts.developer ? { developer_id: opts.developer } : {}) };
      const result = r.url
        ? await adminCall(r, 'POST', '/directory/seed', body)
        : await withDb(config(), (db) =>
            seedDirectory(db, { env: config().appEnv, providers: opts.providers, ...(opts.seed !== undefined ? { seed: opts.seed } : {}), ...(opts.developer ? { developerId: opts.developer } : {}) }),
          );
      const s = result as Record<string, number>;
      print(!!opts.json, s, `providers ${s.providers}, provider-locations ${s.provider_locations} (added ${s.added}, updated ${s.profile_updated})`);
    });

  directory
    .command('import')
    .description('load a directory file (JSON or NDJSON, docs/directory-format.md); all-or-nothing, idempotent')
    .argument('<file>', 'the directory document')
    .option('--developer <id>', "add the imported provider-locations to this developer's directory")
    .option('--format <format>', 'json or ndjson (default: detected from the content)')
    .option('--json', 'print JSON')
    .action(async (file: string, opts: { developer?: string; format?: string; json?: boolean }, cmd: Command) => {
      if (opts.format !== undefined && opts.format !== 'json' && opts.format !== 'ndjson') throw new UsageError('--format must be json or ndjson');
      const format = opts.format as 'json' | 'ndjson' | undefined;
      const text = await readFile(file, 'utf8');
      const r = remote(cmd);
      const bar = progressBar(process.stderr);
      let summary: Record<string, number>;
      let errors: ImportError[] | undefined;
      if (r.url) {
        summary = {};
        const res = await importRemote(r, text, format, opts.developer);
        if ('errors' in res) errors = res.errors;
        else summary = res.summary;
      } else {
        const result = await withDb(config(), (db) =>
          importDirectory(db, text, { env: config().appEnv, developerId: opts.developer, format, onProgress: bar.update }),
        );
        bar.done();
        if (result.ok) summary = result.summary as unknown as Record<string, number>;
        else {
          summary = {};
          errors = result.errors;
        }
      }
      if (errors) {
        if (opts.json) process.stdout.write(`${JSON.stringify({ errors }, null, 2)}\n`);
        for (const e of errors) process.stderr.write(`${file}:${e.line}: ${e.field ? `${e.field}: ` : ''}${e.message}\n`);
        process.stderr.write(`carebook: ${errors.length} error(s); nothing was imported\n`);
        process.exitCode = 1;
        return;
      }
      print(!!opts.json, summary, `imported ${summary.providers} providers, ${summary.locations} locations, ${summary.provider_locations} provider-locations (added ${summary.added}, removed ${summary.removed}, profile updated ${summary.profile_updated})`);
    });

  program
    .command('appointment')
    .description('operate on appointments')
    .command('transition <id>')
    .description('move an appointment as the provider or the service would (fires the webhook)')
    .requiredOption('--to <status>', 'confirmed, booking_failed, cancelled, rescheduled or reschedule_failed')
    .option('--reason-type <type>', 'cancellation_reason_type (with --to cancelled)')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { to: string; reasonType?: string; json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const body = { to: opts.to, ...(opts.reasonType ? { cancellation_reason_type: opts.reasonType } : {}) };
      const result = r.url
        ? await adminCall(r, 'POST', `/appointments/${encodeURIComponent(id)}/transition`, body)
        : await withDb(config(), (db) => operatorTransition(db, config().appEnv, id, body));
      const a = result as Record<string, string>;
      print(!!opts.json, a, `${a.appointment_id} ${a.appointment_status}`);
    });

  const keys = program.command('keys').description('access-token signing keys and their encryption at rest');
  keys
    .command('rotate')
    .description('create a new signing key; the old one keeps verifying tokens for an hour, then leaves the JWKS')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      if (remote(cmd).url) {
        throw new UsageError('keys rotate works on the database directly (DATABASE_URL, or the stopped embedded database), not through --url');
      }
      const cfg = await withKeyEncryption(config());
      const { kid } = await withDb(cfg, (db) => new KeyStore(db, cfg.appEnv, keyEncryptionOf(cfg)).rotate());
      print(!!opts.json, { kid, env: cfg.appEnv }, `new signing key ${kid} (${cfg.appEnv}); running services sign with it within a minute`);
    });
  keys
    .command('rewrap')
    .description('re-encrypt every signing key under KEY_ENCRYPTION_KEY (give the old key as KEY_ENCRYPTION_KEY_PREVIOUS); see docs/operator-guide.md')
    .option('--json', 'print JSON')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      if (remote(cmd).url) {
        throw new UsageError('keys rewrap works on the database directly (DATABASE_URL, or the stopped embedded database), not through --url');
      }
      const cfg = await withKeyEncryption(config());
      const count = await withDb(cfg, (db) => new KeyStore(db, cfg.appEnv, keyEncryptionOf(cfg)).rewrap());
      const id = kekId(cfg.keyEncryptionKey!);
      print(!!opts.json, { rewrapped: count, key_encryption_key_id: id, env: cfg.appEnv }, `${count} signing key(s) of ${cfg.appEnv} re-encrypted under key-encryption key ${id}`);
    });

  addWebhookCommands(program, config);
  addConfigCommand(program, env);

  return program;
}

/** A one-line progress bar on a terminal (nothing when stderr is not a TTY). */
function progressBar(out: NodeJS.WriteStream): { update: (phase: ImportPhase, done: number, total: number) => void; done: () => void } {
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

/** `directory import` through a running service's admin API. */
async function importRemote(
  r: RemoteOpts,
  text: string,
  format: 'json' | 'ndjson' | undefined,
  developerId: string | undefined,
): Promise<{ summary: Record<string, number> } | { errors: ImportError[] }> {
  if (!r.adminToken) throw new Error('--admin-token (or ADMIN_TOKEN) is required with --url');
  const isNd = format === 'ndjson' || (format === undefined && /^\s*\{[^\n]*"type"\s*:/.test(text));
  const q = developerId ? `?developer_id=${encodeURIComponent(developerId)}` : '';
  const res = await fetch(`${r.url!.replace(/\/+$/, '')}/admin/v1/directory/import${q}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${r.adminToken}`, 'content-type': isNd ? 'application/x-ndjson' : 'application/json' },
    body: text,
  });
  const body = (await res.json()) as { errors?: (ImportError & { message: string })[] } & Record<string, number>;
  if (res.status === 400 && body.errors) {
    return { errors: body.errors.map((e) => ({ ...e, message: e.message.replace(/^line \d+: /, '') })) };
  }
  if (!res.ok) throw new Error(`POST /directory/import answered ${res.status}: ${JSON.stringify(body)}`);
  return { summary: body };
}

/**
 * A usage error found by a command's action (after parsing): printed like any other error. Commander's
 * own errors are printed by Commander itself before it throws, which is why `main` prints no
 * `CommanderError`; an `InvalidArgumentError` thrown from an action would exit silently.
 */
class UsageError extends Error {}

/** Entry point: parses argv, prints errors without stacks, sets the exit code. */
export async function main(argv: string[], env: Record<string, string | undefined> = process.env): Promise<void> {
  const program = buildCli(env);
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode;
      return;
    }
    process.stderr.write(`carebook: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
