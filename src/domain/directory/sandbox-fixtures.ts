/**
 * Sandbox fixture provider-locations (docs/api/sandbox.md#fixture-provider-locations): they always exist in the sandbox, belong to
 * every sandbox developer's directory, and force the booking outcome their names say.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { DirectoryDocument } from './document.js';
import { writeDirectory } from './write/write-directory.js';

export const SANDBOX_FIXTURES = {
  pending: 'pr_pending|lo_pending',
  failed: 'pr_failed|lo_failed',
  manual: 'pr_manual|lo_manual',
  rescheduleFailed: 'pr_reschedulefailed|lo_reschedulefailed',
} as const;

export const SANDBOX_FIXTURE_IDS: string[] = Object.values(SANDBOX_FIXTURES);

function fixtureDocument(): DirectoryDocument {
  const names: [string, string, string][] = [
    ['pending', 'Pending', 'Always pending'],
    ['failed', 'Failed', 'Always fails booking'],
    ['manual', 'Manual', 'Manual confirmation'],
    ['reschedulefailed', 'Reschedulefailed', 'Reschedules fail'],
  ];
  return {
    specialties: [{ id: 'sp_sandbox', name: 'Sandbox Testing', care_category: 'health', default_visit_reason_id: 'pc_sandbox_visit' }],
    visit_reasons: [{ id: 'pc_sandbox_visit', name: 'Sandbox visit', specialty_id: 'sp_sandbox', duration_minutes: { new: 30, existing: 30 } }],
    practices: [{ id: 'pt_sandbox', name: 'Sandbox Fixture Practice' }],
    providers: names.map(([slug, last, statement]) => ({
      id: `pr_${slug}`,
      npi: '1234567893',
      practice_id: 'pt_sandbox',
      first_name: 'Fixture',
      last_name: last,
      title: 'MD',
      statement,
      main_specialty_id: 'sp_sandbox',
      specialty_ids: ['sp_sandbox'],
      default_visit_reason_id: 'pc_sandbox_visit',
      visit_reason_ids: ['pc_sandbox_visit'],
      languages: ['English'],
    })),
    locations: names.map(([slug, last]) => ({
      id: `lo_${slug}`,
      location_name: `Sandbox ${last} Clinic`,
      address1: '1 Fixture Way',
      city: 'New York',
      state: 'NY',
      zip_code: '10001',
      latitude: 40.7484,
      longitude: -73.9967,
      time_zone: 'America/New_York',
      phone_number: '2125550100',
    })),
    provider_locations: names.map(([slug]) => ({
      provider_id: `pr_${slug}`,
      location_id: `lo_${slug}`,
      confirmation_type: slug === 'manual' ? 'manual' : 'auto',
      weekly_schedule: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, start: '08:00', end: '18:00' })),
    })),
  };
}

/** Creates or refreshes the fixtures and adds them to every sandbox developer's directory. */
export async function ensureSandboxFixtures(trx: Transaction<Database>): Promise<void> {
  await writeDirectory(trx, 'sandbox', fixtureDocument());
  await trx
    .insertInto('developer_provider_locations')
    .columns(['env', 'developer_id', 'provider_location_id'])
    .expression((eb) =>
      eb
        .selectFrom('developers')
        .innerJoin('provider_locations', (j) => j.on('provider_locations.env', '=', 'sandbox').on('provider_locations.id', 'in', SANDBOX_FIXTURE_IDS))
        .where('developers.env', '=', 'sandbox')
        // Not the practice workspace's system developer (src/domain/practices/workspace-client.ts).
        .where('developers.id', 'not like', 'dv\\_system\\_%')
        .select([eb.val('sandbox').as('env'), 'developers.id', 'provider_locations.id as plid']),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}
