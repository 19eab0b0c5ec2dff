/**
 * Generates a realistic, deterministic directory (docs/api/admin.md#directory-import-and-seed `directory seed`): NPIs with valid
 * check digits, real US ZIP centroids (the `zipcodes` package) with the IANA zone of their
 * coordinates (`@photostructure/tz-lookup`), plausible specialties, visit reasons, plans and weekly
 * schedules, a mix of in-person and virtual locations and of auto and manual confirmation.
 */
import tzLookup from '@photostructure/tz-lookup';
import zipcodes from 'zipcodes';
import type { DirectoryDocument, WeeklyScheduleBlock } from './document.js';
import { npiCheckDigit } from './npi.js';

/** mulberry32: a small, fast, deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SPECIALTIES: { slug: string; name: string; cat: 'health' | 'dental' | 'vision'; reasons: [string, number, number][] }[] = [
  { slug: 'family_medicine', name: 'Family Medicine', cat: 'health', reasons: [['Annual physical', 40, 30], ['Sick visit', 20, 15], ['Follow-up visit', 20, 15]] },
  { slug: 'internal_medicine', name: 'Internal Medicine', cat: 'health', reasons: [['Annual physical', 40, 30], ['Chronic condition follow-up', 30, 20]] },
  { slug: 'pediatrics', name: 'Pediatrics', cat: 'health', reasons: [['Well-child visit', 30, 30], ['Sick child visit', 20, 15]] },
  { slug: 'dermatology', name: 'Dermatology', cat: 'health', reasons: [['Skin check', 30, 20], ['Acne consultation', 30, 20]] },
  { slug: 'cardiology', name: 'Cardiology', cat: 'health', reasons: [['Cardiac consultation', 60, 30], ['Heart rhythm follow-up', 30, 20]] },
  { slug: 'obstetrics_gynecology', name: 'Obstetrics & Gynecology', cat: 'health', reasons: [['Annual gynecological exam', 40, 30], ['Prenatal visit', 30, 20]] },
  { slug: 'orthopedic_surgery', name: 'Orthopedic Surgery', cat: 'health', reasons: [['Joint pain evaluation', 45, 20], ['Sports injury', 40, 20]] },
  { slug: 'psychiatry', name: 'Psychiatry', cat: 'health', reasons: [['Psychiatric evaluation', 60, 30], ['Medication management', 30, 20]] },
  { slug: 'general_dentistry', name: 'General Dentistry', cat: 'dental', reasons: [['Dental cleaning', 60, 45], ['Toothache', 30, 30]] },
  { slug: 'optometry', name: 'Optometry', cat: 'vision', reasons: [['Eye exam', 40, 30], ['Contact lens fitting', 30, 20]] },
];

const FIRST = ['Olivia', 'Liam', 'Emma', 'Noah', 'Ava', 'Elijah', 'Sophia', 'Mateo', 'Isabella', 'Lucas', 'Mia', 'Levi', 'Amelia', 'Ethan', 'Harper', 'James', 'Priya', 'Wei', 'Fatima', 'Diego', 'Aisha', 'Hiro', 'Grace', 'Samuel', 'Nia', 'Omar', 'Chloe', 'Andre', 'Mei', 'Rosa'];
const LAST = ['Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Patel', 'Nguyen', 'Kim', 'Chen', 'Okafor', 'Cohen', 'Rossi', 'Singh', 'Walker'];
const STREETS = ['Main', 'Oak', 'Maple', 'Cedar', 'Park', 'Washington', 'Lake', 'Hill', 'Pine', 'Elm', 'Sunset', 'Lincoln', 'Riverside', 'Church', 'Highland'];
const SUFFIX = ['St', 'Ave', 'Blvd', 'Rd', 'Dr', 'Way'];
const LANGS = ['English', 'Spanish', 'Mandarin', 'Vietnamese', 'Tagalog', 'Arabic', 'French', 'Korean', 'Russian', 'Hindi'];
const SCHOOLS = ['Johns Hopkins University', 'University of Michigan', 'Stanford University', 'University of Washington', 'Duke University', 'Baylor College of Medicine', 'University of California, San Francisco', 'Emory University'];
const CARRIERS = [['Blue Cross Blue Shield', 'bcbs'], ['Aetna', 'aetna'], ['Cigna', 'cigna'], ['UnitedHealthcare', 'uhc'], ['Humana', 'humana'], ['Kaiser Permanente', 'kaiser']] as const;
const US_STATES = new Set('AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY'.split(' '));

/** Reference data shared by every seeded directory: specialties, visit reasons, carriers, plans. */
function referenceData(): Required<Pick<DirectoryDocument, 'specialties' | 'visit_reasons' | 'insurance_carriers' | 'insurance_plans'>> {
  const specialties: NonNullable<DirectoryDocument['specialties']> = [];
  const visitReasons: NonNullable<DirectoryDocument['visit_reasons']> = [];
  for (const s of SPECIALTIES) {
    const reasonIds = s.reasons.map((_, i) => `pc_${s.slug}_${i + 1}`);
    specialties.push({ id: `sp_${s.slug}`, name: s.name, care_category: s.cat, default_visit_reason_id: reasonIds[0]! });
    s.reasons.forEach(([name, dNew, dExisting], i) =>
      visitReasons.push({ id: reasonIds[i]!, name, specialty_id: `sp_${s.slug}`, duration_minutes: { new: dNew, existing: dExisting } }),
    );
  }
  const carriers = CARRIERS.map(([name, slug]) => ({ id: `ic_${slug}`, name }));
  const plans: NonNullable<DirectoryDocument['insurance_plans']> = [];
  for (const [name, slug] of CARRIERS) {
    plans.push(
      { id: `ip_${slug}_ppo`, carrier_id: `ic_${slug}`, name: `${name} PPO`, plan_type: 'ppo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: true, states: null } },
      { id: `ip_${slug}_hmo`, carrier_id: `ic_${slug}`, name: `${name} HMO`, plan_type: 'hmo', program_type: 'commercial', care_categories: ['health'], coverage_area: { is_national: false, states: ['CA', 'NY', 'TX', 'FL', 'IL', 'WA'] } },
      { id: `ip_${slug}_medicare`, carrier_id: `ic_${slug}`, name: `${name} Medicare Advantage`, plan_type: 'medicare', program_type: 'medicare', care_categories: ['health', 'vision'], coverage_area: { is_national: true, states: null } },
      { id: `ip_${slug}_dental`, carrier_id: `ic_${slug}`, name: `${name} Dental`, plan_type: 'ppo', program_type: 'commercial', care_categories: ['dental'], coverage_area: { is_national: true, states: null } },
    );
  }
  plans.push({ id: 'ip_legacy_indemnity', carrier_id: 'ic_aetna', name: 'Aetna Traditional Indemnity (closed)', plan_type: 'indemnity', program_type: 'commercial', status: 'inactive', care_categories: ['health'], coverage_area: { is_national: true, states: null } });
  return { specialties, visit_reasons: visitReasons, insurance_carriers: carriers, insurance_plans: plans };
}

let zipList: string[] | undefined;
function usZips(): string[] {
  zipList ??= Object.keys(zipcodes.codes)
    .filter((z) => /^\d{5}$/.test(z) && US_STATES.has(zipcodes.codes[z]!.state))
    .sort();
  return zipList;
}

function phone(r: () => number): string {
  const d = (lo: number) => String(lo + Math.floor(r() * (10 - lo)));
  return d(2) + d(0) + d(0) + d(2) + Array.from({ length: 6 }, () => d(0)).join('');
}

/** Generates `providers` providers (1–2 locations each) deterministically from `seed`. */
export function generateDirectory(providers: number, seed = 1): DirectoryDocument {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const ref = referenceData();
  const zips = usZips();
  const doc: Required<DirectoryDocument> = {
    ...ref,
    practices: [],
    providers: [],
    locations: [],
    provider_locations: [],
    facilities: [],
  };
  const practiceCount = Math.max(1, Math.ceil(providers / 8));
  for (let i = 0; i < practiceCount; i++) {
    const last = pick(LAST);
    doc.practices.push({ id: `pt_${seed}_${i}`, name: `${last} ${pick(['Family Health', 'Medical Group', 'Clinic', 'Health Partners', 'Care Associates'])}`, insurance_managed_at_practice: i % 10 === 9 });
  }
  const npis = new Set<string>();
  const plansFor = (cat: string) => ref.insurance_plans.filter((p) => p.care_categories.includes(cat) && p.status !== 'inactive');
  for (let i = 0; i < providers; i++) {
    const spec = pick(SPECIALTIES);
    const specId = `sp_${spec.slug}`;
    const reasons = spec.reasons.map((_, k) => `pc_${spec.slug}_${k + 1}`);
    const first = pick(FIRST);
    const last = pick(LAST);
    let npi: string;
    do {
      const base = String(100000000 + Math.floor(r() * 899999999)).slice(0, 9);
      const base9 = (r() < 0.5 ? '1' : '2') + base.slice(1);
      npi = base9 + String(npiCheckDigit(base9));
    } while (npis.has(npi)); // NPIs are unique per provider
    npis.add(npi);
    const practiceId = `pt_${seed}_${i % practiceCount}`;
    const providerId = `pr_${seed}_${i}`;
    const title = spec.cat === 'dental' ? 'DDS' : spec.cat === 'vision' ? 'OD' : pick(['MD', 'MD', 'DO', 'NP', 'PA']);
    doc.providers.push({
      id: providerId,
      npi,
      practice_id: practiceId,
      first_name: first,
      last_name: last,
      title,
      gender_identity: pick(['Female', 'Male', 'Female', 'Male', 'Non-binary']),
      statement: `Dr. ${last} focuses on ${spec.name.toLowerCase()} and long-term relationships with patients.`,
      photo_url: `https://images.example.org/providers/${providerId}.jpg`,
      languages: r() < 0.4 ? ['English', pick(LANGS.slice(1))] : ['English'],
      certifications: [`American Board of ${spec.name}`],
      education_institutions: [pick(SCHOOLS)],
      main_specialty_id: specId,
      specialty_ids: [specId],
      default_visit_reason_id: reasons[0]!,
      visit_reason_ids: reasons,
    });
    const locCount = r() < 0.25 ? 2 : 1;
    for (let k = 0; k < locCount; k++) {
      const virtual = k === 1 && r() < 0.5;
      const zip = pick(zips);
      const z = zipcodes.codes[zip]!;
      const locationId = `lo_${seed}_${i}_${k}`;
      const lat = Math.round((z.latitude + (r() - 0.5) * 0.02) * 1e6) / 1e6;
      const lon = Math.round((z.longitude + (r() - 0.5) * 0.02) * 1e6) / 1e6;
      const tz = tzLookup(z.latitude, z.longitude);
      doc.locations.push(
        virtual
          ? { id: locationId, is_virtual: true, location_name: `${last} Virtual Care`, state: z.state, time_zone: tz }
          : {
              id: locationId,
              location_name: `${doc.practices[i % practiceCount]!.name} - ${z.city}`,
              address1: `${1 + Math.floor(r() * 9000)} ${pick(STREETS)} ${pick(SUFFIX)}`,
              ...(r() < 0.3 ? { address2: `Suite ${100 + Math.floor(r() * 400)}` } : {}),
              city: z.city,
              state: z.state,
              zip_code: zip,
              latitude: lat,
              longitude: lon,
              time_zone: tz,
              phone_number: phone(r),
              ...(r() < 0.2 ? { phone_extension: String(100 + Math.floor(r() * 900)) } : {}),
            },
      );
      const hours: WeeklyScheduleBlock[] = [];
      const startHour = 7 + Math.floor(r() * 3);
      for (let wd = 1; wd <= 5; wd++) {
        if (r() < 0.15) continue;
        hours.push({ weekday: wd, start: `${String(startHour).padStart(2, '0')}:00`, end: '12:00' });
        hours.push({ weekday: wd, start: '13:00', end: `${String(16 + Math.floor(r() * 3)).padStart(2, '0')}:00` });
      }
      if (r() < 0.2) hours.push({ weekday: 6, start: '09:00', end: '13:00' });
      const plans = plansFor(spec.cat).filter(() => r() < 0.6).map((p) => p.id);
      doc.provider_locations.push({
        provider_id: providerId,
        location_id: locationId,
        provider_location_type: virtual ? 'virtual_provider' : 'in_person_provider',
        visit_type: virtual ? 'platform_video_service' : 'in_person',
        confirmation_type: r() < 0.7 ? 'auto' : 'manual',
        required_fields: ['patient.insurance'].filter(() => r() < 0.3),
        accepts_booking_requests_from: r() < 0.8 ? ['in_network', 'out_of_network', 'self_pay'] : ['in_network'],
        insurance_plan_ids: plans,
        weekly_schedule: hours,
      });
      if (!virtual && r() < 0.05) {
        doc.facilities.push({ id: `fa_${seed}_${i}_${k}`, name: `${z.city} ${pick(['Community Clinic', 'General Hospital'])}`, npi, building_type: r() < 0.5 ? 'clinic' : 'hospital', provider_location_id: `${providerId}|${locationId}` });
      }
    }
  }
  return doc;
}
