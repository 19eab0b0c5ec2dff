/**
 * Webhook events, keys and delivery records (issue #5; docs/api/webhooks.md). Imports only Kysely.
 * - `outbox_events.changed_attributes`: text[] of paths → jsonb `[{attribute_path, attachment_type?}]`,
 *   so `patient.uploaded_attachments` can carry its `attachment_type`; existing rows keep their paths in order.
 * - `outbox_events.status` gains `no_endpoint`: an event that could not be sent because the developer had no
 *   receiver yet (before: `skipped`, like the developer's own calls). It can be replayed; own-call skips cannot.
 * - `webhook_endpoints`: `keys text[]` → `key` plus `previous_key` and `previous_key_expires_at`, so the
 *   24-hour overlap runs from the moment the key actually changed, whatever else is set meanwhile.
 * - `webhook_deliveries` gains the tenant columns `env` and `developer_id` (issue #2), backfilled from the event.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE outbox_events ADD COLUMN changed_attributes_v2 jsonb NOT NULL DEFAULT '[]'::jsonb`.execute(db);
  await sql`
    UPDATE outbox_events SET changed_attributes_v2 = coalesce(
      (SELECT jsonb_agg(jsonb_build_object('attribute_path', u.path) ORDER BY u.ord)
       FROM unnest(changed_attributes) WITH ORDINALITY AS u(path, ord)), '[]'::jsonb)`.execute(db);
  await sql`ALTER TABLE outbox_events DROP COLUMN changed_attributes`.execute(db);
  await sql`ALTER TABLE outbox_events RENAME COLUMN changed_attributes_v2 TO changed_attributes`.execute(db);

  await sql`ALTER TABLE outbox_events DROP CONSTRAINT IF EXISTS outbox_events_status_check`.execute(db);
  await sql`
    ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_status_check
      CHECK (status IN ('pending', 'delivered', 'failed', 'skipped', 'no_endpoint'))`.execute(db);
  await sql`UPDATE outbox_events SET status = 'no_endpoint' WHERE status = 'skipped' AND last_error = 'no webhook endpoint registered'`.execute(db);

  await sql`ALTER TABLE webhook_endpoints ADD COLUMN key text`.execute(db);
  await sql`ALTER TABLE webhook_endpoints ADD COLUMN previous_key text`.execute(db);
  await sql`ALTER TABLE webhook_endpoints ADD COLUMN previous_key_expires_at timestamptz`.execute(db);
  await sql`
    UPDATE webhook_endpoints SET key = keys[1], previous_key = keys[2],
      previous_key_expires_at = CASE WHEN keys[2] IS NULL THEN NULL ELSE updated_at + interval '24 hours' END`.execute(db);
  await sql`ALTER TABLE webhook_endpoints ALTER COLUMN key SET NOT NULL`.execute(db);
  await sql`ALTER TABLE webhook_endpoints DROP COLUMN keys`.execute(db);

  await sql`ALTER TABLE webhook_deliveries ADD COLUMN env text`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN developer_id text`.execute(db);
  await sql`
    UPDATE webhook_deliveries d SET env = e.env, developer_id = e.developer_id
    FROM outbox_events e WHERE e.id = d.event_id`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ALTER COLUMN env SET NOT NULL`.execute(db);
  await sql`ALTER TABLE webhook_deliveries ALTER COLUMN developer_id SET NOT NULL`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_developer ON webhook_deliveries (developer_id, attempted_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS webhook_deliveries_developer`.execute(db);
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN developer_id`.execute(db);
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN env`.execute(db);

  await sql`ALTER TABLE webhook_endpoints ADD COLUMN keys text[]`.execute(db);
  await sql`
    UPDATE webhook_endpoints SET keys = CASE WHEN previous_key IS NOT NULL AND previous_key_expires_at > now()
      THEN ARRAY[key, previous_key] ELSE ARRAY[key] END`.execute(db);
  await sql`ALTER TABLE webhook_endpoints ALTER COLUMN keys SET NOT NULL`.execute(db);
  await sql`ALTER TABLE webhook_endpoints DROP COLUMN previous_key_expires_at`.execute(db);
  await sql`ALTER TABLE webhook_endpoints DROP COLUMN previous_key`.execute(db);
  await sql`ALTER TABLE webhook_endpoints DROP COLUMN key`.execute(db);

  await sql`UPDATE outbox_events SET status = 'skipped' WHERE status = 'no_endpoint'`.execute(db);
  await sql`ALTER TABLE outbox_events DROP CONSTRAINT IF EXISTS outbox_events_status_check`.execute(db);
  await sql`
    ALTER TABLE outbox_events ADD CONSTRAINT outbox_events_status_check
      CHECK (status IN ('pending', 'delivered', 'failed', 'skipped'))`.execute(db);

  await sql`ALTER TABLE outbox_events ADD COLUMN changed_attributes_v1 text[] NOT NULL DEFAULT '{}'`.execute(db);
  await sql`
    UPDATE outbox_events SET changed_attributes_v1 = ARRAY(
      SELECT a->>'attribute_path' FROM jsonb_array_elements(changed_attributes) WITH ORDINALITY AS u(a, ord) ORDER BY u.ord)`.execute(db);
  await sql`ALTER TABLE outbox_events DROP COLUMN changed_attributes`.execute(db);
  await sql`ALTER TABLE outbox_events RENAME COLUMN changed_attributes_v1 TO changed_attributes`.execute(db);
}
