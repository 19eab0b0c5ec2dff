/** The webhook body (contracts.md §7). */
export type UpdateType = 'created' | 'updated' | 'cancelled';

export interface WebhookBody {
  event_type: 'appointment_updated';
  webhook_timestamp: string;
  data: {
    data_type: 'appointment_data';
    appointment_data: {
      appointment_id: string;
      appointment_updated_timestamp: string;
      appointment_update_type: UpdateType;
      changed_attributes: { attribute_path: string }[];
    };
  };
}

export function webhookBody(e: { appointmentId: string; occurredAt: Date; updateType: UpdateType; changedAttributes: string[] }, now: Date): WebhookBody {
  return {
    event_type: 'appointment_updated',
    webhook_timestamp: now.toISOString(),
    data: {
      data_type: 'appointment_data',
      appointment_data: {
        appointment_id: e.appointmentId,
        appointment_updated_timestamp: e.occurredAt.toISOString(),
        appointment_update_type: e.updateType,
        changed_attributes: e.changedAttributes.map((attribute_path) => ({ attribute_path })),
      },
    },
  };
}
