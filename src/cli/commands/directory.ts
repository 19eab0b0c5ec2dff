/** `carebook directory seed | import`: load the provider directory. */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { importDirectory } from '../../domain/directory/import/import-directory.js';
import { documentToNdjson } from '../../domain/directory/import/ndjson.js';
import type { ImportError } from '../../domain/directory/import/parse.js';
import { generateDirectory } from '../../domain/directory/seed.js';
import { seedDirectory } from '../../domain/directory/seed-directory.js';
import { adminCall } from '../admin-client.js';
import { intArg, print, remote, UsageError, withDb, type ConfigSource, type RemoteOpts } from '../command-support.js';
import { progressBar } from '../progress-bar.js';

/** Adds `directory seed` and `directory import` to `program`. */
export function addDirectoryCommands(program: Command, config: ConfigSource): void {
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
