/**
 * Validates a parsed directory file before anything is written (all-or-nothing import, issue #4):
 * the record schemas (document-schema.ts), duplicate ids, NPI check digits, IANA zones, schedule
 * times, addresses of in-person locations, and every reference, resolved against the file itself
 * and then against what the environment already holds. Every error carries the record's line.
 */
import { sql } from 'kysely';
import { Compile } from 'typebox/compile';
import type { Db } from '../../../db/database.js';
import type { Env } from '../../../db/schema.js';
import { SECTIONS, SECTION_NAMES, type Section } from '../document-schema.js';
import type { DirectoryDocument } from '../document.js';
import { isValidNpi } from '../npi.js';
import type { ImportError, ParsedDocument } from './parse.js';

const MAX_ERRORS_PER_RECORD = 10;

const validators = Object.fromEntries(SECTION_NAMES.map((s) => [s, Compile(SECTIONS[s].schema)])) as unknown as Record<
  Section,
  ReturnType<typeof Compile>
>;

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
}

function describe(e: { keyword: string; params: Record<string, unknown>; message: string }): string {
  switch (e.keyword) {
    case 'required':
      return `${String((e.params.requiredProperties as string[] | undefined)?.join(', ') ?? e.params.missingProperty ?? '')} is required`.trim();
    case 'additionalProperties':
      return `unknown field ${String((e.params.additionalProperties as string[] | undefined)?.join(', ') ?? e.params.additionalProperty ?? '')}`;
    case 'enum':
      return `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `has an invalid format (must match ${String(e.params.pattern)})`;
    default:
      return e.message;
  }
}

function validZone(zone: string, cache: Map<string, boolean>): boolean {
  let ok = cache.get(zone);
  if (ok === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      ok = zone.includes('/') || zone === 'UTC';
    } catch {
      ok = false;
    }
    cache.set(zone, ok);
  }
  return ok;
}

/** Ids of `table` that exist in `env`, among `ids`. */
async function existing(db: Db, table: string, env: Env, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const { rows } = await sql<{ id: string }>`SELECT id FROM ${sql.table(table)} WHERE env = ${env} AND id = ANY(${ids}::text[])`.execute(db);
  return new Set(rows.map((r) => r.id));
}

/**
 * Checks `parsed` for writing into `env`. Returns the typed document, or every error found (sorted
 * by line).
 */
export async function validateDirectory(
  db: Db,
  env: Env,
  parsed: ParsedDocument,
): Promise<{ document: DirectoryDocument } | { errors: ImportError[] }> {
  const errors: ImportError[] = [];
  const bad = new Set<string>(); // `${section}:${index}` of records failing the schema
  for (const s of SECTION_NAMES) {
    const v = validators[s];
    parsed.records[s].forEach((rec, i) => {
      if (v.Check(rec)) return;
      bad.add(`${s}:${i}`);
      let n = 0;
      for (const e of v.Errors(rec) as Iterable<{ keyword: string; instancePath: string; params: Record<string, unknown>; message: string }>) {
        if (n++ >= MAX_ERRORS_PER_RECORD) break;
        if (e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
        const path = pointerToPath(e.instancePath);
        errors.push({ line: parsed.lines[s][i]!, field: `${s}[${i}]${path ? `.${path}` : ''}`, message: describe(e) });
      }
    });
  }
  const doc = parsed.records as unknown as Required<DirectoryDocument>;
  const ok = <T>(s: Section, f: (rec: T, i: number, line: number) => void) =>
    (parsed.records[s] as T[]).forEach((rec, i) => {
      if (!bad.has(`${s}:${i}`)) f(rec, i, parsed.lines[s][i]!);
    });
  const err = (s: Section, i: number, line: number, field: string, message: string) =>
    errors.push({ line, field: `${s}[${i}]${field ? `.${field}` : ''}`, message });

  // Duplicate ids within the file (the later record is reported).
  for (const s of SECTION_NAMES) {
    const seen = new Map<string, number>();
    ok<Record<string, unknown>>(s, (rec, i, line) => {
      const key = s === 'provider_locations' ? `${String(rec.provider_id)}|${String(rec.location_id)}` : String(rec.id);
      const first = seen.get(key);
      if (first !== undefined) err(s, i, line, s === 'provider_locations' ? '' : 'id', `duplicate of the record on line ${first}`);
      else seen.set(key, line);
    });
  }

  // Record-level rules the schema cannot say.
  const zones = new Map<string, boolean>();
  ok<NonNullable<DirectoryDocument['providers']>[number]>('providers', (p, i, line) => {
    if (!isValidNpi(p.npi)) err('providers', i, line, 'npi', 'check digit is wrong (Luhn over 80840 + the first 9 digits)');
    if (p.default_visit_reason_id && p.visit_reason_ids && !p.visit_reason_ids.includes(p.default_visit_reason_id)) {
      err('providers', i, line, 'default_visit_reason_id', 'must be one of visit_reason_ids');
    }
  });
  ok<NonNullable<DirectoryDocument['facilities']>[number]>('facilities', (f, i, line) => {
    if (f.npi && !isValidNpi(f.npi)) err('facilities', i, line, 'npi', 'check digit is wrong');
  });
  ok<NonNullable<DirectoryDocument['locations']>[number]>('locations', (l, i, line) => {
    if (!validZone(l.time_zone, zones)) err('locations', i, line, 'time_zone', `unknown IANA time zone ${l.time_zone}`);
    if (!l.is_virtual) {
      for (const k of ['address1', 'city', 'zip_code', 'latitude', 'longitude'] as const) {
        if (l[k] === undefined) err('locations', i, line, k, 'is required for an in-person location');
      }
    }
  });
  ok<NonNullable<DirectoryDocument['insurance_plans']>[number]>('insurance_plans', (p, i, line) => {
    if (!p.coverage_area.is_national && !p.coverage_area.states?.length) {
      err('insurance_plans', i, line, 'coverage_area.states', 'must list states when is_national is false');
    }
  });
  ok<NonNullable<DirectoryDocument['provider_locations']>[number]>('provider_locations', (pl, i, line) => {
    pl.weekly_schedule?.forEach((b, k) => {
      if (b.end <= b.start) err('provider_locations', i, line, `weekly_schedule[${k}].end`, 'must be after start');
    });
  });

  // References: to the file first, then to the environment.
  const inFile = (s: Section, key: (r: Record<string, unknown>) => string = (r) => String(r.id)) =>
    new Set((parsed.records[s] as Record<string, unknown>[]).filter((_, i) => !bad.has(`${s}:${i}`)).map(key));
  const refs: { table: Section; fileIds: Set<string>; uses: { s: Section; i: number; line: number; field: string; id: string }[] }[] = [];
  const ref = (table: Section, fileIds = inFile(table)) => {
    const r = { table, fileIds, uses: [] as { s: Section; i: number; line: number; field: string; id: string }[] };
    refs.push(r);
    return (s: Section, i: number, line: number, field: string, id: string | undefined) => {
      if (id !== undefined && !fileIds.has(id)) r.uses.push({ s, i, line, field, id });
    };
  };
  const practice = ref('practices');
  const specialty = ref('specialties');
  const reason = ref('visit_reasons');
  const carrier = ref('insurance_carriers');
  const plan = ref('insurance_plans');
  const provider = ref('providers');
  const location = ref('locations');
  const pl = ref('provider_locations', inFile('provider_locations', (r) => `${String(r.provider_id)}|${String(r.location_id)}`));

  ok<NonNullable<DirectoryDocument['specialties']>[number]>('specialties', (s, i, line) => reason('specialties', i, line, 'default_visit_reason_id', s.default_visit_reason_id));
  ok<NonNullable<DirectoryDocument['visit_reasons']>[number]>('visit_reasons', (v, i, line) => specialty('visit_reasons', i, line, 'specialty_id', v.specialty_id));
  ok<NonNullable<DirectoryDocument['insurance_plans']>[number]>('insurance_plans', (p, i, line) => carrier('insurance_plans', i, line, 'carrier_id', p.carrier_id));
  ok<NonNullable<DirectoryDocument['practices']>[number]>('practices', (p, i, line) =>
    p.insurance_plan_ids?.forEach((id, k) => plan('practices', i, line, `insurance_plan_ids[${k}]`, id)),
  );
  ok<NonNullable<DirectoryDocument['providers']>[number]>('providers', (p, i, line) => {
    practice('providers', i, line, 'practice_id', p.practice_id);
    specialty('providers', i, line, 'main_specialty_id', p.main_specialty_id);
    p.specialty_ids?.forEach((id, k) => specialty('providers', i, line, `specialty_ids[${k}]`, id));
    reason('providers', i, line, 'default_visit_reason_id', p.default_visit_reason_id);
    p.visit_reason_ids?.forEach((id, k) => reason('providers', i, line, `visit_reason_ids[${k}]`, id));
  });
  ok<NonNullable<DirectoryDocument['provider_locations']>[number]>('provider_locations', (p, i, line) => {
    provider('provider_locations', i, line, 'provider_id', p.provider_id);
    location('provider_locations', i, line, 'location_id', p.location_id);
    p.insurance_plan_ids?.forEach((id, k) => plan('provider_locations', i, line, `insurance_plan_ids[${k}]`, id));
    p.weekly_schedule?.forEach((b, k) =>
      b.visit_reason_ids?.forEach((id, m) => reason('provider_locations', i, line, `weekly_schedule[${k}].visit_reason_ids[${m}]`, id)),
    );
  });
  ok<NonNullable<DirectoryDocument['facilities']>[number]>('facilities', (f, i, line) => pl('facilities', i, line, 'provider_location_id', f.provider_location_id));

  const TABLE: Record<Section, string> = {
    practices: 'practices', specialties: 'specialties', visit_reasons: 'visit_reasons', insurance_carriers: 'insurance_carriers',
    insurance_plans: 'insurance_plans', providers: 'providers', locations: 'locations', provider_locations: 'provider_locations',
    facilities: 'facilities',
  };
  for (const r of refs) {
    if (!r.uses.length) continue;
    const known = await existing(db, TABLE[r.table], env, [...new Set(r.uses.map((u) => u.id))]);
    for (const u of r.uses) {
      if (!known.has(u.id)) err(u.s, u.i, u.line, u.field, `unknown ${r.table.replace(/s$/, '').replace(/_/g, ' ')} ${u.id} (not in this file nor in the directory)`);
    }
  }

  if (errors.length) return { errors: errors.sort((a, b) => a.line - b.line) };
  const out: DirectoryDocument = {};
  for (const s of SECTION_NAMES) if (doc[s].length) (out as Record<string, unknown>)[s] = doc[s];
  return { document: out };
}
