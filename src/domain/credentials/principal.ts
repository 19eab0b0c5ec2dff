/**
 * Who is calling (docs/api/auth.md#credentials, docs/api/auth.md): a developer's machine credential, a signed-in
 * patient or provider, or an anonymous end user of a developer's app.
 */
import type { Env } from '../../db/schema.js';

interface Base {
  env: Env;
  developerId: string;
  /** The OAuth client the token was issued to. */
  clientId: string;
  scopes: ReadonlySet<string>;
}

export interface ClientPrincipal extends Base {
  kind: 'client';
}

export interface UserPrincipal extends Base {
  kind: 'user';
  userId: string;
  role: 'patient' | 'provider';
  providerId: string | null;
}

export interface AnonymousPrincipal extends Base {
  kind: 'anonymous';
  subject: string;
}

export type Principal = ClientPrincipal | UserPrincipal | AnonymousPrincipal;

/** Verifies a bearer token and returns its principal; throws on any invalid token. */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}
