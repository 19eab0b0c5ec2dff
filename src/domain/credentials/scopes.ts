/** Scopes of docs/api/auth.md#scopes. */
export const CLIENT_CREDENTIALS_SCOPES = [
  'external.appointment.read',
  'external.appointment.write',
  'external.anonymous_token.write',
  'external.provider_insurance.write',
  'external.schedulable_entity.read',
  'external.credential.rotate',
  'external.calendar.read',
  'external.calendar.write',
] as const;

export const AUTHORIZATION_CODE_SCOPES = [
  'external.appointment.read',
  'external.appointment.write',
  'external.schedulable_entity.read',
  'offline_access',
] as const;

export type Scope = (typeof CLIENT_CREDENTIALS_SCOPES)[number] | (typeof AUTHORIZATION_CODE_SCOPES)[number];
