// All five steps against a running sandbox: node docs/quickstart/run.mjs
import { readFileSync } from 'node:fs';
import { getToken } from './1-token.mjs';
import { searchProviders } from './2-search.mjs';
import { availability } from './3-availability.mjs';
import { book } from './4-book.mjs';
import { sendMockWebhook, startReceiver } from './5-webhook.mjs';

export async function quickstart({ baseUrl, clientId, clientSecret, zipCode, specialtyId, receiverPort }) {
  const token = await getToken(baseUrl, clientId, clientSecret);
  const found = await searchProviders(baseUrl, token, zipCode, specialtyId);
  const providerLocationId = found.provider_locations[0].provider_location_id;
  const [first] = await availability(baseUrl, token, providerLocationId, found.search_parameters.visit_reason_id);
  const appointment = await book(baseUrl, token, providerLocationId, first);

  const key = Buffer.from('my-webhook-signing-key').toString('base64');
  const events = [];
  const receiver = await startReceiver(receiverPort, key, (event) => events.push(event));
  await sendMockWebhook(baseUrl, token, `http://127.0.0.1:${receiverPort}/hook`, key);
  receiver.close();
  console.log('webhook received:', events[0]?.event_type);
  return { appointment, events };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const creds = JSON.parse(readFileSync('data/demo-credentials.json', 'utf8'));
  await quickstart({
    baseUrl: process.env.BASE_URL ?? 'http://127.0.0.1:8080',
    clientId: creds.client_id,
    clientSecret: creds.client_secret,
    zipCode: process.argv[2] ?? '10001',
    specialtyId: process.argv[3] ?? 'sp_family_medicine',
    receiverPort: 9000,
  });
}
