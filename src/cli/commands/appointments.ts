/** `carebook appointment transition`: move an appointment as the provider or the service would. */
import type { Command } from 'commander';
import { operatorTransition } from '../../domain/appointments/operator-transition.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

/** Adds `appointment transition` to `program`. */
export function addAppointmentCommands(program: Command, config: ConfigSource): void {
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
}
