// 4. Book one of those times. The Idempotency-Key makes a retry after a timeout safe.
import { randomUUID } from 'node:crypto';

export async function book(baseUrl, token, providerLocationId, timeslot) {
  const res = await fetch(`${baseUrl}/v1/appointments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({
      appointment_type: 'providers',
      data: {
        start_time: timeslot.start_time,
        visit_reason_id: timeslot.visit_reason_id,
        provider_location_id: providerLocationId,
        patient_type: 'new',
        patient: {
          developer_patient_id: 'patient-1042',
          first_name: 'Ada',
          last_name: 'Lovelace',
          date_of_birth: '1990-05-17',
          sex_at_birth: 'female',
          phone_number: '2125550123',
          email_address: 'ada@example.org',
          patient_address: { address1: '350 5th Ave', city: 'New York', state: 'NY', zip_code: '10118' },
        },
      },
    }),
  });
  if (!res.ok) throw new Error(`book: ${res.status} ${await res.text()}`);
  const { data } = await res.json();
  console.log('booked', data.appointment_id, data.appointment_status); // pending_booking, then confirmed
  return data;
}
