/**
 * The sandbox's mock delivery (interface.md §6, contracts.md §7): one signed example event, sent to
 * the given URL exactly as a real delivery would be, and returned as sent.
 */
import { uuid } from '../lib/ids.js';
import { webhookBody, type UpdateType, type WebhookBody } from './payload.js';
import { sendWebhook, type SendResult } from './send.js';
import { signatureHeader } from './signature.js';
import type { TargetPolicy } from './target-policy.js';

const EXAMPLE_CHANGES: Record<UpdateType, string[]> = {
  created: [],
  updated: ['appointment.start_time', 'appointment.status'],
  cancelled: ['appointment.status'],
};

export async function sendMockWebhook(
  input: { url: string; keyBase64: string; updateType: UpdateType },
  policy: TargetPolicy,
  now = new Date(),
): Promise<{ body: WebhookBody; result: SendResult }> {
  const body = webhookBody({ appointmentId: uuid(), occurredAt: now, updateType: input.updateType, changedAttributes: EXAMPLE_CHANGES[input.updateType] }, now);
  const raw = JSON.stringify(body);
  const timestamp = Math.floor(now.getTime() / 1000);
  const result = await sendWebhook(
    input.url,
    raw,
    { 'webhook-id': `mock_${uuid()}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader([input.keyBase64], timestamp, raw) },
    policy,
  );
  return { body, result };
}
