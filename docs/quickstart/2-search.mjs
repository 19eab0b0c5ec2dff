// 2. Providers near a ZIP code for a specialty, nearest first.
export async function searchProviders(baseUrl, token, zipCode, specialtyId) {
  const query = new URLSearchParams({ zip_code: zipCode, specialty_id: specialtyId, page_size: '5' });
  const res = await fetch(`${baseUrl}/v1/provider_locations?${query}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`search: ${res.status} ${await res.text()}`);
  const { data } = await res.json();
  for (const pl of data.provider_locations) {
    console.log(pl.provider_location_id, pl.provider.full_name, `${pl.location?.distance_to_patient_mi ?? '?'} mi`);
  }
  return data; // { search_parameters: { specialty_id, visit_reason_id }, provider_locations: [...] }
}
