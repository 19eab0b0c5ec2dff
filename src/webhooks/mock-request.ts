/**
 * The sandbox's mock delivery (docs/api/webhooks.md#mock-delivery, docs/api/webhooks.md): one signed example event, sent
 * to the given URL exactly as a real delivery would be, and returned as sent (the same bytes).
 */
import { uuid } from '../lib/ids.js';
import { webhookBody, type ChangedAttribute, type UpdateType } from './payload.js';
import { sendWebhook, type SendResult } from './send.js';
import { signatureHeader } from './signature.js';
import type { TargetPolicy } from './target-policy.js';

const EXAMPLE_CHANGES: Record<UpdateType, ChangedAttribute[]> = {
  created: [],
  updated: [
    { attribute_path: 'appointment.start_time' },
    { attribute_path: 'appointment.status' },
    { attribute_path: 'patient.uploaded_attachments', attachment_type: 'community_care_packet' },
  ],
  cancelled: [{ attribute_path: 'appointment.status' }],
};

/**
 * Signs and sends one example event of `updateType` (docs/api/webhooks.md#mock-delivery). Returns `raw`, the exact
 * bytes sent and signed, for the route to answer with unchanged, and the send outcome.
 */
export async function sendMockWebhook(
  input: { url: string; keyBase64: string; updateType: UpdateType },
  policy: TargetPolicy,
  now = new Date(),
): Promise<{ raw: string; result: SendResult }> {
  const raw = JSON.stringify(webhookBody({ appointmentId: uuid(), occurredAt: now, updateType: input.updateType, changedAttributes: EXAMPLE_CHANGES[input.updateType] }, now));
  const timestamp = Math.floor(now.getTime() / 1000);
  const result = await sendWebhook(
    input.url,
    raw,
    { 'webhook-id': `mock_${uuid()}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader([input.keyBase64], timestamp, raw) },
    policy,
  );
  return { raw, result };
}
