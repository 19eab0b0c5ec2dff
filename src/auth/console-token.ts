/**
 * Verifies the Console API's bearer tokens (docs/decisions/0015-developer-console.md, "Accounts";
 * docs/auth.md, "Console accounts and sign-in"): user access tokens of role `developer` issued to
 * the developer console client, whose family is live. The account and the developer accounts it
 * owns are read on every call, so a deleted account or a new production developer counts at once.
 */
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { readConsoleUser, type ConsoleUser } from '../domain/console/accounts.js';
import { consoleClientId } from '../domain/console/console-client.js';
import { InvalidToken, type AccessTokenReader } from './token-verifier.js';

export interface ConsoleTokenVerifier {
  /** The caller of a `/console/v1` call; throws `InvalidToken` for any token that may not call it. */
  verify(token: string): Promise<ConsoleUser>;
}

/** Builds the Console API's verifier over the shared access-token reader (signature, issuer, audience, expiry). */
export function createConsoleTokenVerifier(deps: { config: Config; db: Db; reader: AccessTokenReader }): ConsoleTokenVerifier {
  const { config, db, reader } = deps;
  const env = config.appEnv;
  const consoleClient = consoleClientId(env);
  return {
    async verify(token) {
      const payload = await reader.read(token);
      if (payload.env !== env) throw new InvalidToken('token of another environment');
      if (payload.knd !== 'user' || typeof payload.sub !== 'string' || typeof payload.fid !== 'string') throw new InvalidToken('not a console user token');
      if (payload.role !== 'developer' || payload.client_id !== consoleClient) throw new InvalidToken('not a console token');
      await reader.checkFamily(payload.fid);
      const user = await readConsoleUser(db, env, payload.sub);
      if (!user) throw new InvalidToken('console account no longer exists');
      return user;
    },
  };
}
