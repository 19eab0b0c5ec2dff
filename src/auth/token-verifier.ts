/**
 * Access-token verification for the API. Issue #3 (the auth server) implements this with JWKS
 * verification; until then no token is accepted, so every `/v1` operation answers 401.
 */
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { TokenVerifier } from '../domain/credentials/principal.js';

export function createTokenVerifier(_deps: { config: Config; db: Db }): TokenVerifier {
  return {
    async verify(): Promise<never> {
      throw new Error('token verification not available');
    },
  };
}
