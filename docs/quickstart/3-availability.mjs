// 3. Bookable start times for one provider location, for a new patient and a visit reason.
export async function availability(baseUrl, token, providerLocationId, visitReasonId) {
  const query = new URLSearchParams({ provider_location_ids: providerLocationId, visit_reason_id: visitReasonId, patient_type: 'new' });
  const res = await fetch(`${baseUrl}/v1/provider_locations/availability?${query}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`availability: ${res.status} ${await res.text()}`);
  const { data } = await res.json();
  return data[0].timeslots; // [{ start_time: '2026-12-01T09:30:00-05:00', visit_reason_id }]
}
