// All five steps against a running sandbox, from the repository root:
//   node docs/quickstart/run.mjs                      picks a ZIP code and specialty with open times from your directory
//   node docs/quickstart/run.mjs <zip> <specialty>    or names them
// BASE_URL (default http://127.0.0.1:8080), DATA_DIR (default data, where the sandbox saved
// demo-credentials.json) and RECEIVER_PORT (default 9000) may be set in the environment.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getToken } from './1-token.mjs';
import { searchProviders } from './2-search.mjs';
import { availability } from './3-availability.mjs';
import { book } from './4-book.mjs';
import { sendMockWebhook, startReceiver } from './5-webhook.mjs';

const get = async (baseUrl, token, path) => {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()).data;
};

/** A ZIP code and specialty of the directory where a provider has open times for new patients. */
export async function pickTarget(baseUrl, token) {
  const { schedulable_entities: entities } = await get(baseUrl, token, '/v1/schedulable_entities?page_size=100');
  // The sandbox's fixture providers (specialty sp_sandbox) simulate failures: skip them.
  const open = entities.filter((e) => e.main_specialty_id && e.main_specialty_id !== 'sp_sandbox' && e.new_patient_availability?.next_28_days === 'available');
  for (const e of open) {
    const pl = await get(baseUrl, token, `/v1/provider_locations/${encodeURIComponent(e.id)}`);
    if (pl.location?.zip_code) return { zipCode: pl.location.zip_code, specialtyId: e.main_specialty_id };
  }
  throw new Error('No in-person provider with open times in your directory: import one (see docs/operator-guide.md).');
}

/** Runs the five steps; without a ZIP code and specialty it picks them with `pickTarget`. */
export async function quickstart({ baseUrl, clientId, clientSecret, zipCode, specialtyId, receiverPort }) {
  const token = await getToken(baseUrl, clientId, clientSecret);
  if (!zipCode || !specialtyId) ({ zipCode, specialtyId } = await pickTarget(baseUrl, token));
  console.log(`searching ${specialtyId} near ${zipCode}`);
  const found = await searchProviders(baseUrl, token, zipCode, specialtyId);
  let chosen;
  for (const pl of found.provider_locations) {
    const [first] = await availability(baseUrl, token, pl.provider_location_id, found.search_parameters.visit_reason_id);
    if (first) {
      chosen = { providerLocationId: pl.provider_location_id, first };
      break;
    }
  }
  if (!chosen) throw new Error(`No provider of ${specialtyId} with open times near ${zipCode}. Run without arguments to pick a ZIP code and specialty from your directory.`);
  const appointment = await book(baseUrl, token, chosen.providerLocationId, chosen.first);

  const key = Buffer.from('my-webhook-signing-key').toString('base64');
  const events = [];
  const receiver = await startReceiver(receiverPort, key, (event) => events.push(event));
  await sendMockWebhook(baseUrl, token, `http://127.0.0.1:${receiverPort}/hook`, key);
  receiver.close();
  console.log('webhook received:', events[0]?.event_type);
  return { appointment, events };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const file = join(process.env.DATA_DIR || 'data', 'demo-credentials.json');
    if (!existsSync(file)) throw new Error(`${file} not found: start the sandbox first (npm start) and run this from the repository root.`);
    const creds = JSON.parse(readFileSync(file, 'utf8'));
    await quickstart({
      baseUrl: process.env.BASE_URL ?? 'http://127.0.0.1:8080',
      clientId: creds.client_id,
      clientSecret: creds.client_secret,
      zipCode: process.argv[2],
      specialtyId: process.argv[3],
      receiverPort: Number(process.env.RECEIVER_PORT ?? 9000),
    });
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  }
}
