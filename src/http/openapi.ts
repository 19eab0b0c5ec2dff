/**
 * The OpenAPI 3.1 document, generated from the route schemas (`GET /openapi.json`), and the
 * interactive reference at `/docs`.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { withExamples } from './openapi-examples.js';

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
          '`{request_id, error_type, errors: [{field, message}]}`.',
      },
      servers: [{ url: config.publicBaseUrl, description: config.appEnv }],
      components: {
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
          AdminToken: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ ClientCredentialsFlow: [] }, { AuthorizationCodeFlow: [] }],
    },
    // Examples for every operation, from one central file (src/http/openapi-examples.ts).
    transformObject: (doc) => ('openapiObject' in doc ? withExamples(doc.openapiObject) : doc.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
