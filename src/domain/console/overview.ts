/** The console account's overview for `GET /console/v1/me` (docs/console.md). Framework-free. */
import type { Db } from '../../db/database.js';
import type { Env } from '../../db/schema.js';
import type { ConsoleUser } from './accounts.js';
import { latestProductionRequest, type ProductionStatus } from './production.js';

export interface ConsoleOverview {
  user_id: string;
  email: string;
  developers: { developer_id: string; name: string; env: Env; created_at: string }[];
  production: {
    status: ProductionStatus;
    request_id: string | null;
    requested_at: string | null;
    decided_at: string | null;
    refusal_reason: string | null;
    console_url: string | null;
  };
}

/** The account, the developer accounts it owns (oldest first) and where its production access stands. */
export async function consoleOverview(db: Db, user: ConsoleUser): Promise<ConsoleOverview> {
  const devs = user.developerIds.length
    ? await db.selectFrom('developers').select(['id', 'name', 'env', 'created_at']).where('id', 'in', user.developerIds).orderBy('created_at').orderBy('id').execute()
    : [];
  const req = await latestProductionRequest(db, user);
  const status: ProductionStatus = devs.some((d) => d.env === 'production') ? 'granted' : (req?.status ?? 'none');
  return {
    user_id: user.userId,
    email: user.email,
    developers: devs.map((d) => ({ developer_id: d.id, name: d.name, env: d.env, created_at: d.created_at.toISOString() })),
    production: {
      status,
      request_id: req?.id ?? null,
      requested_at: req?.created_at ?? null,
      decided_at: req?.decided_at ?? null,
      refusal_reason: req?.status === 'refused' ? req.refusal_reason : null,
      console_url: req?.status === 'granted' ? req.production_console_url : null,
    },
  };
}
