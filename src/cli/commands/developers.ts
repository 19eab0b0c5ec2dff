/**
 * `carebook developer create`: onboard a developer; `developer grant-production` and
 * `developer refuse-production`: decide a console account's production request
 * (docs/api/admin.md#production-requests).
 */
import type { Command } from 'commander';
import { withProductionTarget } from '../../db/production-target.js';
import { grantProduction } from '../../domain/console/production-grant.js';
import { refuseProduction } from '../../domain/console/production.js';
import { createDeveloper } from '../../domain/developers/create-developer.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

/** Adds `developer create`, `developer grant-production` and `developer refuse-production` to `program`. */
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
        : await withDb(config(), (db) => withProductionTarget(config(), (target) => grantProduction(db, config().appEnv, requestId, target)));
      const d = result as unknown as Record<string, string>;
      const where = d.production_console_url ? `\nthe account signs in at ${d.production_console_url} with its sandbox e-mail and password` : '';
      print(!!opts.json, d, `request ${d.id} granted to ${d.email}\nproduction developer_id ${d.production_developer_id}\napp_id ${d.app_id} (the account sees its secret once in the console)${where}`);
    });
  developer
    .command('refuse-production')
    .description('refuse a production request of a console account, with a reason it reads in its console (docs/api/admin.md#production-requests)')
    .argument('<request_id>', 'the id of the production request (prq_…)')
    .requiredOption('--reason <text>', 'why (1 to 1000 characters)')
    .option('--json', 'print JSON')
    .action(async (requestId: string, opts: { reason: string; json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const result = r.url
        ? ((await adminCall(r, 'POST', `/production-requests/${encodeURIComponent(requestId)}/refuse`, { reason: opts.reason })) as { data: Record<string, string> }).data
        : await withDb(config(), (db) => refuseProduction(db, config().appEnv, requestId, opts.reason));
      const d = result as unknown as Record<string, string>;
      print(!!opts.json, d, `request ${d.id} of ${d.email} refused`);
    });
}
