/**
 * The OpenAPI 3.1 document, generated from the route schemas (`GET /openapi.json`), and the
 * interactive reference at `/docs`.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { withExamples } from './openapi-examples.js';
import { COMMON_RESPONSES, completeOperations, ERROR_BODY_SCHEMA } from './openapi-operations.js';

export async function installOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Carebook: appointment booking and provider directory',
        version: '1.22.0',
        description:
          'Find providers and book appointments for patients. Every `/v1` operation needs a bearer token ' +
          '(OAuth 2 client credentials or authorization code with PKCE). Errors share one body: ' +
          '`{request_id, error_type, errors: [{field, message}]}`, and one 400 names every bad field. ' +
          'A method a path does not take answers 405 with an `Allow` header listing those it does.',
        contact: { name: 'Carebook API support', url: `${config.publicBaseUrl}/docs` },
        license: { name: 'Proprietary: use under your Carebook developer agreement', url: `${config.publicBaseUrl}/docs` },
      },
      servers: [{ url: config.publicBaseUrl, description: config.appEnv }],
      components: {
        schemas: { ErrorBody: ERROR_BODY_SCHEMA as never },
        // A copy: `completeOperations` drops the ones no operation uses.
        responses: structuredClone(COMMON_RESPONSES) as never,
        securitySchemes: {
          ClientCredentialsFlow: {
            type: 'oauth2',
            flows: { clientCredentials: { tokenUrl: `${config.authUrl}/oauth/token`, scopes: {} } },
          },
          AuthorizationCodeFlow: {
            type: 'oauth2',
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.authUrl}/authorize`,
                tokenUrl: `${config.authUrl}/oauth/token`,
                scopes: {},
              },
            },
          },
          PracticeWorkspaceFlow: {
            type: 'oauth2',
            description: 'A practice staff member (or a provider user) signed in through the practice workspace client (docs/auth.md, "Practice accounts and sign-in").',
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.authUrl}/authorize`,
                tokenUrl: `${config.authUrl}/oauth/token`,
                scopes: {
                  'practice.read': 'calendars, appointments and schedules of the practice',
                  'practice.write': 'appointment moves and schedule changes',
                  'practice.admin': 'invite and remove staff',
                },
              },
            },
          },
          DeveloperConsoleFlow: {
            type: 'oauth2',
            description: 'A developer signed in to the developer console through its own client (docs/auth.md, "Console accounts and sign-in").',
            flows: {
              authorizationCode: {
                authorizationUrl: `${config.authUrl}/authorize`,
                tokenUrl: `${config.authUrl}/oauth/token`,
                scopes: { console: 'the account\'s developers, apps and credentials' },
              },
            },
          },
          AdminToken: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ ClientCredentialsFlow: [] }, { AuthorizationCodeFlow: [] }],
    },
    // Examples for every operation (src/http/openapi-examples.ts), then ids, descriptions, tags and
    // the statuses every operation can answer (src/http/openapi-operations.ts).
    transformObject: (doc) => ('openapiObject' in doc ? completeOperations(withExamples(doc.openapiObject)) : doc.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
