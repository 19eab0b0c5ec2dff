/**
 * Who the caller of the Practice API is and what their practice holds (`GET /practice/v1/me`,
 * docs/decisions/0014-practice-workspace.md, "Accounts"): the user, the practice, and its providers
 * with their provider-locations; a provider user sees only their own provider.
 */
import type { Db } from '../../db/database.js';
import { notFound } from '../errors.js';
import type { StaffPrincipal } from './staff-principal.js';

export interface PracticeProviderLocation {
  provider_location_id: string;
  location_id: string;
  location_name: string | null;
  time_zone: string;
  confirmation_type: string;
}

export interface PracticeProvider {
  provider_id: string;
  name: string;
  provider_locations: PracticeProviderLocation[];
}

export interface PracticeOverview {
  user_id: string;
  email: string;
  role: StaffPrincipal['role'];
  practice: { id: string; name: string };
  scopes: string[];
  providers: PracticeProvider[];
}

/** The caller's overview; `notFound` when the user or the practice is gone from the directory. */
export async function practiceOverview(db: Db, staff: StaffPrincipal): Promise<PracticeOverview> {
  const [user, practice] = await Promise.all([
    db.selectFrom('users').select(['id', 'email']).where('id', '=', staff.userId).where('env', '=', staff.env).executeTakeFirst(),
    db.selectFrom('practices').select(['id', 'name']).where('id', '=', staff.practiceId).where('env', '=', staff.env).executeTakeFirst(),
  ]);
  if (!user) throw notFound('no such user');
  if (!practice) throw notFound(`practice ${staff.practiceId} is not in the directory`);
  let q = db
    .selectFrom('providers as p')
    .leftJoin('provider_locations as pl', (j) => j.onRef('pl.provider_id', '=', 'p.id').onRef('pl.env', '=', 'p.env').on('pl.active', '=', true))
    .leftJoin('locations as l', (j) => j.onRef('l.id', '=', 'pl.location_id').onRef('l.env', '=', 'pl.env'))
    .select(['p.id as provider_id', 'p.first_name', 'p.last_name', 'p.title', 'pl.id as pl_id', 'pl.location_id', 'pl.confirmation_type', 'l.location_name', 'l.time_zone'])
    .where('p.env', '=', staff.env)
    .where('p.practice_id', '=', staff.practiceId);
  if (staff.role === 'provider') q = q.where('p.id', '=', staff.providerId ?? '');
  const rows = await q.orderBy('p.last_name').orderBy('p.first_name').orderBy('p.id').orderBy('pl.id').execute();
  const providers = new Map<string, PracticeProvider>();
  for (const r of rows) {
    let p = providers.get(r.provider_id);
    if (!p) {
      const name = `${r.first_name} ${r.last_name}`.trim() + (r.title ? `, ${r.title}` : '');
      p = { provider_id: r.provider_id, name, provider_locations: [] };
      providers.set(r.provider_id, p);
    }
    if (r.pl_id && r.location_id && r.time_zone) {
      p.provider_locations.push({
        provider_location_id: r.pl_id,
        location_id: r.location_id,
        location_name: r.location_name ?? null,
        time_zone: r.time_zone,
        confirmation_type: r.confirmation_type ?? 'auto',
      });
    }
  }
  return {
    user_id: user.id,
    email: user.email,
    role: staff.role,
    practice: { id: practice.id, name: practice.name },
    scopes: [...staff.scopes].sort(),
    providers: [...providers.values()],
  };
}
