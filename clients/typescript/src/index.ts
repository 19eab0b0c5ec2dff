/**
 * `@carebook/client`: a typed client for the Carebook API (generated from its `/openapi.json`).
 */
export { createCarebookClient, unwrap, type CarebookClient, type CarebookClientOptions, type PagedPath, type QueryOf, type BodyOf, type Appointment, type ProviderLocation, type CalendarTimeslot, type BookingRequest, type StateCode, type paths } from './client.js';
export { CarebookError, errorFromResponse, type ApiErrorItem } from './errors.js';
export { authorizeUrl, base64url, codeChallenge, createCodeVerifier, createState, exchangeCode, parseCallback, startAuthorization, type AuthorizeUrlOptions, type PkceStart } from './pkce.js';
export { backoffMs, retryAfterMs, withRetries, type RetryOptions } from './retry.js';
export { ClientCredentialsTokenSource, UserTokenSource, refreshUserToken, requestToken, staticToken, userTokenFetch, type ClientCredentialsOptions, type TokenResponse, type TokenSource, type UserTokenOptions } from './tokens.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookEvent } from './webhooks.js';
