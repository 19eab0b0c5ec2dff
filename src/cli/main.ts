/**
 * `carebook` — the operator's command line (docs/api/admin.md#access). Each command works directly on the
 * database (the service must be stopped when it is embedded PGlite), or, with `--url` and
 * `--admin-token`, through a running service's admin API. The commands are in `commands/`, one
 * file per group; this file builds the program from them and runs it.
 */
import { Command, CommanderError } from 'commander';
import { loadConfig, type Config } from '../config.js';
import { addAppointmentCommands } from './commands/appointments.js';
import { addConfigCommand } from './commands/config.js';
import { addDeveloperCommands } from './commands/developers.js';
import { addDirectoryCommands } from './commands/directory.js';
import { addKeyCommands } from './commands/keys.js';
import { addServiceCommands } from './commands/service.js';
import { addPracticeCommands } from './commands/practices.js';
import { addUserCommands } from './commands/users.js';
import { addWebhookCommands } from './commands/webhooks.js';

/** The program with every command group, in the order `--help` lists them; `env` configures it when a command runs. */
export function buildCli(env: Record<string, string | undefined>): Command {
  const program = new Command('carebook')
    .description('Carebook operator tool')
    .option('--url <url>', 'act through a running service at this address (admin API)')
    .option('--admin-token <token>', 'admin token for --url (default: $ADMIN_TOKEN)', env.ADMIN_TOKEN)
    .enablePositionalOptions()
    .exitOverride()
    .showHelpAfterError();
  const config = (): Config => loadConfig(env);
  addServiceCommands(program, config);
  addDeveloperCommands(program, config);
  addUserCommands(program, config);
  addPracticeCommands(program, config);
  addDirectoryCommands(program, config);
  addAppointmentCommands(program, config);
  addKeyCommands(program, config);
  addWebhookCommands(program, config);
  addConfigCommand(program, env);
  return program;
}

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
