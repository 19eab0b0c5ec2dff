/**
 * `directory import` reports every bad row in one run (issue #4 §1): unreadable NDJSON lines and
 * unknown JSON sections do not hide the other records' errors, and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { importDirectory } from '../../src/domain/directory/import/import-directory.js';
import { parseDirectoryText } from '../../src/domain/directory/import/parse.js';
import { engineName, freshDatabase } from '../helpers/db.js';

const specialty = { id: 'sp_fam', name: 'Family Medicine', care_category: 'health', default_visit_reason_id: 'pc_fam_1' };
const reason = { id: 'pc_fam_1', name: 'Annual physical', specialty_id: 'sp_fam', duration_minutes: { new: 30, existing: 20 } };
const practice = { id: 'pt_a', name: 'Practice A' };
const provider = { id: 'pr_a1', npi: '1230000014', practice_id: 'pt_a', first_name: 'Ava', last_name: 'Patel' };

describe(`import error reporting (${engineName})`, () => {
  let h: DatabaseHandle;
  beforeAll(async () => {
    h = await freshDatabase();
  });
  afterAll(async () => h.close());

  const providers = async () => (await h.db.selectFrom('providers').select('id').execute()).length;

  it('NDJSON: a broken line, an unknown type and a bad record are all reported, by line, and nothing is written', async () => {
    const lines = [
      JSON.stringify({ type: 'specialty', ...specialty }),
      JSON.stringify({ type: 'visit_reason', ...reason }),
      '{"type":"practice","id":"pt_a",', // line 3: not JSON
      JSON.stringify({ type: 'wizard', id: 'x' }), // line 4: unknown type
      JSON.stringify({ type: 'practice', id: 'pt_b', name: 'Practice B' }),
      JSON.stringify({ type: 'provider', ...provider, practice_id: 'pt_b', id: 'pr_b1', npi: '1234567890' }), // line 6: bad check digit
      JSON.stringify({ type: 'provider', ...provider, practice_id: 'pt_b' }),
    ];
    const r = await importDirectory(h.db, lines.join('\n'), { env: 'sandbox' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const byLine = r.errors.map((e) => e.line);
    expect(byLine).toEqual([...byLine].sort((a, b) => a - b));
    expect(byLine).toContain(3);
    expect(r.errors.find((e) => e.line === 4)?.field).toBe('type');
    expect(r.errors.find((e) => e.line === 6)?.field).toMatch(/npi/);
    expect(await providers()).toBe(0);
  });

  it('JSON: an unknown section is reported at its own line and the known sections are still checked', async () => {
    const text = [
      '{',
      `  "specialties": [${JSON.stringify(specialty)}],`,
      '  "doctors": [],',
      `  "visit_reasons": [${JSON.stringify(reason)}],`,
      `  "practices": [${JSON.stringify(practice)}],`,
      '  "providers": [',
      `    ${JSON.stringify({ ...provider, npi: '12' })}`,
      '  ]',
      '}',
    ].join('\n');
    const parsed = parseDirectoryText(text, 'json');
    expect('errors' in parsed && parsed.errors).toEqual([expect.objectContaining({ line: 3, field: 'doctors' })]);
    const r = await importDirectory(h.db, text, { env: 'sandbox' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors[0]).toMatchObject({ line: 3, field: 'doctors' });
    expect(r.errors.some((e) => e.line === 7 && /npi/.test(e.field ?? ''))).toBe(true);
    expect(await providers()).toBe(0);
  });

  it('a file that is not JSON at all stops at the first error, with its line', async () => {
    const r = await importDirectory(h.db, '{\n "providers": [\n  {"id": }\n ]\n}', { env: 'sandbox', format: 'json' });
    expect(r).toMatchObject({ ok: false, errors: [{ line: 3 }] });
  });
});
