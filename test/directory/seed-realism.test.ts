/**
 * `directory seed` uses real US ZIP centroids with their states and IANA zones, from the `zipcodes`
 * and `@photostructure/tz-lookup` packages (issue #4 §2), not invented places.
 */
import tzLookup from '@photostructure/tz-lookup';
import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import zipcodes from 'zipcodes';
import { generateDirectory } from '../../src/domain/directory/seed.js';

describe('seeded places are real', () => {
  const doc = generateDirectory(300, 11);
  const locations = doc.locations ?? [];

  it('every in-person location sits at a real ZIP centroid of its state, in that centroid\'s time zone', () => {
    const inPerson = locations.filter((l) => !l.is_virtual);
    expect(inPerson.length).toBeGreaterThan(250);
    for (const l of inPerson) {
      const z = zipcodes.lookup(l.zip_code!);
      expect(z, l.zip_code).toBeTruthy();
      expect(l.state, l.id).toBe(z!.state);
      expect(Math.abs(l.latitude! - z!.latitude), l.id).toBeLessThan(0.011);
      expect(Math.abs(l.longitude! - z!.longitude), l.id).toBeLessThan(0.011);
      expect(l.time_zone, l.id).toBe(tzLookup(z!.latitude, z!.longitude));
    }
  });

  it('spreads over many states and zones, and virtual locations name a real state and zone', () => {
    const inPerson = locations.filter((l) => !l.is_virtual);
    expect(new Set(inPerson.map((l) => l.state)).size).toBeGreaterThan(20);
    expect(new Set(inPerson.map((l) => l.time_zone)).size).toBeGreaterThan(3);
    for (const l of locations.filter((x) => x.is_virtual)) {
      expect(l.state).toMatch(/^[A-Z]{2}$/);
      expect(IANAZone.isValidZone(l.time_zone!), l.time_zone).toBe(true);
    }
  });
});
