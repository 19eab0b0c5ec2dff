/** `carebook developer create`: onboard a developer; `developer grant-production`: grant a console account's production request. */
import type { Command } from 'commander';
import { grantProduction } from '../../domain/console/production.js';
import { createDeveloper } from '../../domain/developers/create-developer.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

/** Adds `developer create` and `developer grant-production` to `program`. */
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
  developer
    .command('grant-production')
    .description('grant a production request of a console account: creates its production developer (docs/api/admin.md#production-requests)')
    .argument('<request_id>', 'the id of the production request (prq_…)')
    .option('--json', 'print JSON')
    .action(async (requestId: string, opts: { json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const result = r.url
        ? ((await adminCall(r, 'POST', `/production-requests/${encodeURIComponent(requestId)}/grant`, {})) as { data: Record<string, string> }).data
        : await withDb(config(), (db) => grantProduction(db, config().appEnv, requestId));
      const d = result as unknown as Record<string, string>;
      print(!!opts.json, d, `request ${d.id} granted to ${d.email}\nproduction developer_id ${d.production_developer_id}\napp_id ${d.app_id} (the account sees its secret once in the console)`);
    });
}
