/** The webhook body (docs/api/webhooks.md#event-body). */
export type UpdateType = 'created' | 'updated' | 'cancelled';

/** One changed attribute: its path, and for `patient.uploaded_attachments` the `attachment_type` (issue #5 §2). */
export interface ChangedAttribute {
  attribute_path: string;
  attachment_type?: string;
}

export interface WebhookBody {
  event_type: 'appointment_updated';
  webhook_timestamp: string;
  data: {
    data_type: 'appointment_data';
    appointment_data: {
      appointment_id: string;
      appointment_updated_timestamp: string;
      appointment_update_type: UpdateType;
      changed_attributes: ChangedAttribute[];
    };
  };
}

/**
 * The body of one event (docs/api/webhooks.md#event-body). Each changed attribute keeps only `attribute_path` and, when
 * present, `attachment_type`, so nothing else stored with the event can reach the receiver.
 */
export function webhookBody(
  e: { appointmentId: string; occurredAt: Date; updateType: UpdateType; changedAttributes: readonly (string | ChangedAttribute)[] },
  now: Date,
): WebhookBody {
  return {
    event_type: 'appointment_updated',
    webhook_timestamp: now.toISOString(),
    data: {
      data_type: 'appointment_data',
      appointment_data: {
        appointment_id: e.appointmentId,
        appointment_updated_timestamp: e.occurredAt.toISOString(),
        appointment_update_type: e.updateType,
        changed_attributes: e.changedAttributes.map((a) =>
          typeof a === 'string'
            ? { attribute_path: a }
            : { attribute_path: a.attribute_path, ...(a.attachment_type ? { attachment_type: a.attachment_type } : {}) },
        ),
      },
    },
  };
}

/** The body of a console test event (docs/console.md, "Webhooks"): names no appointment. */
export interface TestWebhookBody {
  event_type: 'test';
  webhook_timestamp: string;
  data: { data_type: 'test_data'; test_data: { event_id: string; developer_id: string; message: string } };
}

/**
 * A test event's body (docs/console.md, "Webhooks"): `event_type` `test`, so a receiver that acts on
 * `appointment_updated` ignores it, signed and sent exactly like an appointment event.
 */
export function testWebhookBody(e: { eventId: string; developerId: string }, now: Date): TestWebhookBody {
  return {
    event_type: 'test',
    webhook_timestamp: now.toISOString(),
    data: { data_type: 'test_data', test_data: { event_id: e.eventId, developer_id: e.developerId, message: 'A test event sent from the developer console.' } },
  };
}
