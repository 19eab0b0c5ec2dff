/** `carebook developer create`: onboard a developer. */
import type { Command } from 'commander';
import { createDeveloper } from '../../domain/developers/create-developer.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

/** Adds `developer create` to `program`. */
export function addDeveloperCommands(program: Command, config: ConfigSource): void {
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
}
