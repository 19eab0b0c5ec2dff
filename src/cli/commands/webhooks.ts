/** `carebook webhook set | deliveries | replay` (docs/api/admin.md). */
import { InvalidArgumentError, type Command } from 'commander';
import { setWebhookEndpoint } from '../../webhooks/endpoints.js';
import { listDeliveries, replayEvents } from '../../webhooks/worker.js';
import { adminCall } from '../admin-client.js';
import { print, remote, withDb, type ConfigSource } from '../command-support.js';

function dateArg(v: string): string {
  if (Number.isNaN(Date.parse(v))) throw new InvalidArgumentError('must be an ISO-8601 date-time, e.g. 2026-11-01T00:00:00Z');
  return new Date(v).toISOString();
}

/** Adds `webhook set`, `webhook deliveries` and `webhook replay` to `program`. */
export function addWebhookCommands(program: Command, config: ConfigSource): void {
  const webhook = program.command('webhook').description("a developer's webhook receiver and deliveries");

  webhook
    .command('set')
    .requiredOption('--developer <id>')
    .requiredOption('--url <url>', 'the receiver (https in production)')
    .requiredOption('--key <base64>', 'signing key, base64; the previous key keeps signing for 24 h')
    .action(async (o: { developer: string; url: string; key: string }, cmd: Command) => {
      const r = remote(cmd);
      if (r.url) await adminCall(r, 'PUT', `/developers/${encodeURIComponent(o.developer)}/webhook`, { url: o.url, key: o.key });
      else await withDb(config(), (db) => setWebhookEndpoint(db, { env: config().appEnv, developerId: o.developer, url: o.url, key: o.key, allowPrivateTargets: config().allowPrivateWebhookTargets }));
      print(false, undefined, `webhook receiver of ${o.developer}: ${o.url}`);
    });

  webhook
    .command('deliveries')
    .requiredOption('--developer <id>')
    .option('--json', 'print JSON')
    .action(async (o: { developer: string; json?: boolean }, cmd: Command) => {
      const r = remote(cmd);
      const rows = r.url
        ? ((await adminCall(r, 'GET', `/webhook-deliveries?developer_id=${encodeURIComponent(o.developer)}`)) as { data: Record<string, unknown>[] }).data
        : (await withDb(config(), (db) => listDeliveries(db, o.developer))).map((d) => ({ ...d, attempted_at: d.attempted_at.toISOString() }));
      const human = rows.map((d) => `${d.attempted_at}  ${d.event_id}  #${d.attempt}  ${d.status_code ?? '-'}  ${d.latency_ms} ms  ${d.error ?? ''}`).join('\n') || 'no deliveries';
      print(!!o.json, rows, human);
    });

  webhook
    .command('replay')
    .requiredOption('--developer <id>')
    .description('send again every delivered, failed or no_endpoint event since a time (never the developer\'s own changes)')
    .requiredOption('--since <time>', 'ISO-8601 time', dateArg)
    .action(async (o: { developer: string; since: string }, cmd: Command) => {
      const r = remote(cmd);
      const n = r.url
        ? ((await adminCall(r, 'POST', '/webhook-replays', { developer_id: o.developer, since: o.since })) as { replayed: number }).replayed
        : await withDb(config(), (db) => replayEvents(db, o.developer, new Date(o.since)));
      print(false, undefined, `${n} event(s) queued for delivery again`);
    });
}
