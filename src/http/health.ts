/** `/healthz` (process up), `/readyz` (database reachable, migrations current), `/metrics` (docs/api/deployment.md). */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { Type } from 'typebox';
import { ping, type Db } from '../db/database.js';
import { migrationsCurrent } from '../db/migrate.js';

const Status = Type.Object({ status: Type.String(), database: Type.Optional(Type.String()) });

export function healthRoutes(app: FastifyInstance, db: Db, registry: Registry): void {
  app.get('/healthz', { schema: { hide: true, response: { 200: Status } } }, async () => ({ status: 'ok' }));

  // Once every migration this build knows has been applied, that stays true for the process.
  let migrationsOk = false;
  app.get('/readyz', { schema: { hide: true, response: { 200: Status, 503: Status } } }, async (_req, reply) => {
    if (!(await ping(db))) return reply.code(503).send({ status: 'unavailable', database: 'unreachable' });
    migrationsOk ||= await migrationsCurrent(db).catch(() => false);
    if (!migrationsOk) return reply.code(503).send({ status: 'unavailable', database: 'migrations pending' });
    return { status: 'ok', database: 'ok' };
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
