/** `carebook practice admin create`: a practice's first admin (docs/operator-guide.md, "Practice admins"). */
import type { Command } from 'commander';
import { invitationUrl } from '../../domain/practices/invitations.js';
import { createPracticeAdmin } from '../../domain/practices/members.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

interface AdminCreated {
  user_id: string;
  email: string;
  practice_id: string;
  role: 'practice_admin';
  invitation_url: string | null;
  invitation_expires_at: string | null;
}

/** Adds `practice admin create` to `program`. */
export function addPracticeCommands(program: Command, config: ConfigSource): void {
  program
    .command('practice')
    .description('practice accounts of the practice workspace')
    .command('admin')
    .description('a practice\'s admins')
    .command('create')
    .description('create an admin of a practice; prints a one-time invitation URL that sets the password (or use --password)')
    .requiredOption('--practice <id>', 'the practice_id of the directory')
    .requiredOption('--email <email>')
    .option('--password <password>', 'set the password now instead of printing an invitation URL')
    .option('--json', 'print JSON')
    .action(async (opts: { practice: string; email: string; password?: string; json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const body = { email: opts.email, ...(opts.password !== undefined ? { password: opts.password } : {}) };
      const result: AdminCreated = r.url
        ? ((await adminCall(r, 'POST', `/practices/${encodeURIComponent(opts.practice)}/admins`, body)) as AdminCreated)
        : await withDb(config(), async (db) => {
            const c = config();
            const made = await createPracticeAdmin(db, c.appEnv, { practiceId: opts.practice, ...body });
            return {
              user_id: made.userId,
              email: made.email,
              practice_id: opts.practice,
              role: 'practice_admin' as const,
              invitation_url: made.invitation ? invitationUrl(c.publicBaseUrl, made.invitation.token) : null,
              invitation_expires_at: made.invitation ? made.invitation.expiresAt.toISOString() : null,
            };
          });
      const human = result.invitation_url
        ? `user_id ${result.user_id} (practice_admin of ${result.practice_id})\ninvitation_url ${result.invitation_url}\nThe link works once, until ${result.invitation_expires_at}; it sets the password.`
        : `user_id ${result.user_id} (practice_admin of ${result.practice_id}); sign in to the practice workspace with the password given`;
      print(!!opts.json, result, human);
    });
}
