/** `carebook user create`: a login for the authorization code flow. */
import type { Command } from 'commander';
import { createUser } from '../../domain/users/create-user.js';
import { adminCall } from '../admin-client.js';
import { print, remote, UsageError, withDb, type ConfigSource } from '../command-support.js';

/** Adds `user create` to `program`. */
export function addUserCommands(program: Command, config: ConfigSource): void {
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
}
