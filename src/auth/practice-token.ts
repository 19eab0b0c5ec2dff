/**
 * Verifies the Practice API's bearer tokens (docs/decisions/0014-practice-workspace.md, "Sign-in",
 * "Scopes"; docs/auth.md, "Practice accounts and sign-in"): user access tokens of role `staff`, and
 * provider users' tokens issued to the practice workspace client. The token's family must be live, and
 * the membership is read on every call, so removing a member (or deleting the user) takes effect at
 * once. The principal's scopes are the token's, capped by the role's (`ROLE_SCOPES`).
 */
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { ROLE_SCOPES, type StaffPrincipal } from '../domain/practices/staff-principal.js';
import { workspaceClientId } from '../domain/practices/workspace-client.js';
import { InvalidToken, type AccessTokenReader } from './token-verifier.js';

export interface PracticeTokenVerifier {
  /** The caller of a `/practice/v1` call; throws `InvalidToken` for any token that may not call it. */
  verify(token: string): Promise<StaffPrincipal>;
}

/** Builds the Practice API's verifier over the shared access-token reader (signature, issuer, audience, expiry). */
export function createPracticeTokenVerifier(deps: { config: Config; db: Db; reader: AccessTokenReader }): PracticeTokenVerifier {
  const { config, db, reader } = deps;
  const env = config.appEnv;
  const workspaceClient = workspaceClientId(env);
  return {
    async verify(token) {
      const payload = await reader.read(token);
      if (payload.env !== env) throw new InvalidToken('token of another environment');
      if (payload.knd !== 'user' || typeof payload.sub !== 'string' || typeof payload.client_id !== 'string' || typeof payload.fid !== 'string') {
        throw new InvalidToken('not a practice user token');
      }
      const isProvider = payload.role === 'provider' && payload.client_id === workspaceClient;
      if (payload.role !== 'staff' && !isProvider) throw new InvalidToken('not a practice token');
      await reader.checkFamily(payload.fid);
      const tokenScopes = new Set(typeof payload.scope === 'string' && payload.scope ? payload.scope.split(' ') : []);
      const base = { env, userId: payload.sub, clientId: payload.client_id };
      if (isProvider) {
        // The provider's practice, read now (a directory import may move a provider to another practice).
        const row = await db
          .selectFrom('users as u')
          .innerJoin('providers as p', (j) => j.onRef('p.id', '=', 'u.provider_id').onRef('p.env', '=', 'u.env'))
          .select(['p.id as provider_id', 'p.practice_id'])
          .where('u.id', '=', payload.sub)
          .where('u.env', '=', env)
          .where('u.role', '=', 'provider')
          .executeTakeFirst();
        if (!row) throw new InvalidToken('provider user no longer exists');
        const scopes = new Set(ROLE_SCOPES.provider.filter((s) => tokenScopes.has(s)));
        return { ...base, practiceId: row.practice_id, role: 'provider', providerId: row.provider_id, scopes };
      }
      const member = await db
        .selectFrom('practice_members')
        .select(['practice_id', 'role'])
        .where('user_id', '=', payload.sub)
        .where('env', '=', env)
        .executeTakeFirst();
      if (!member) throw new InvalidToken('no longer a member of a practice');
      const scopes = new Set(ROLE_SCOPES[member.role].filter((s) => tokenScopes.has(s)));
      return { ...base, practiceId: member.practice_id, role: member.role, providerId: null, scopes };
    },
  };
}
