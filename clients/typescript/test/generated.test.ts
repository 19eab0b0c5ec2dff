/**
 * The committed `openapi.json` and `src/generated/schema.ts` are what the service describes today:
 * the service's own OpenAPI document (built in memory, as `scripts/generate.ts` does) and the types
 * openapi-typescript makes from it. A route change without regenerating fails here.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { serviceOpenApi, typesFor } from '../scripts/generate.js';

const REGENERATE = 'The committed client files are stale: run `npm run generate -w @carebook/client` and commit the result.';
const file = (name: string): Promise<string> => readFile(new URL(`../${name}`, import.meta.url), 'utf8');

describe('generated client files', () => {
  it('openapi.json and src/generated/schema.ts match the service', async () => {
    const doc = await serviceOpenApi();
    const committedDoc = JSON.parse(await file('openapi.json')) as unknown;
    // Round-trip through JSON so the comparison sees exactly what the generator writes.
    expect(committedDoc, `openapi.json: ${REGENERATE}`).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(await file('src/generated/schema.ts'), `src/generated/schema.ts: ${REGENERATE}`).toBe(await typesFor(doc));
  });
});
