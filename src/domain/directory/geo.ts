/**
 * ZIP centroids (the maintained `zipcodes` package, as the seed uses) and great-circle distance in
 * miles, in SQL so that search filters and sorts in the database (docs/api/directory.md#provider-location-search, search by ZIP).
 */
import { sql, type RawBuilder } from 'kysely';
import zipcodes from 'zipcodes';

export const EARTH_RADIUS_MI = 3958.8;

export interface ZipCentroid {
  zip: string;
  latitude: number;
  longitude: number;
  state: string;
}

/** The centroid of a 5-digit US ZIP code, or undefined when unknown. */
export function zipCentroid(zip: string): ZipCentroid | undefined {
  if (!/^\d{5}$/.test(zip)) return undefined;
  const z = zipcodes.lookup(zip);
  if (!z || typeof z.latitude !== 'number' || typeof z.longitude !== 'number') return undefined;
  return { zip, latitude: z.latitude, longitude: z.longitude, state: z.state };
}

/** Haversine distance in miles from (lat, lon) to the row's `lat`/`lon` columns. */
export function distanceMiSql(latCol: string, lonCol: string, lat: number, lon: number): RawBuilder<number> {
  return sql<number>`(${EARTH_RADIUS_MI}::float8 * 2 * asin(least(1, sqrt(
    power(sin(radians(${sql.ref(latCol)} - ${lat}::float8) / 2), 2)
    + cos(radians(${lat}::float8)) * cos(radians(${sql.ref(latCol)}))
      * power(sin(radians(${sql.ref(lonCol)} - ${lon}::float8) / 2), 2)))))`;
}

/** A latitude/longitude box that contains every point within `miles` of (lat, lon). */
export function boundingBox(lat: number, lon: number, miles: number): { minLat: number; maxLat: number; minLon: number; maxLon: number } {
  const dLat = (miles / EARTH_RADIUS_MI) * (180 / Math.PI);
  const cosLat = Math.max(Math.cos((lat * Math.PI) / 180), 0.01);
  const dLon = Math.min(180, dLat / cosLat);
  return { minLat: lat - dLat, maxLat: lat + dLat, minLon: lon - dLon, maxLon: lon + dLon };
}
