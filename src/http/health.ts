/**
 * `/healthz` (process up), `/readyz` (database reachable, migrations current; with a read replica,
 * its state, which never fails readiness: reads fall back to the primary), `/metrics` (docs/api/deployment.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { Type } from 'typebox';
import { ping, type Db } from '../db/database.js';
import { migrationsCurrent } from '../db/migrate.js';
import type { ReplicaState } from '../db/replica-state.js';

const Status = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
  replica: Type.Optional(Type.String({ description: 'ok, lagging, unreachable, starting or not a standby (docs/operator-guide.md, "Read replicas")' })),
  replica_lag_ms: Type.Optional(Type.Integer()),
});

/** What `/readyz` adds about the replica, when there is one. */
function replicaStatus(replica: ReplicaState | undefined): { replica?: string; replica_lag_ms?: number } {
  if (!replica) return {};
  const r = replica.report();
  return { replica: r.condition, ...(r.lagMs !== undefined ? { replica_lag_ms: Math.round(r.lagMs) } : {}) };
}

export function healthRoutes(app: FastifyInstance, db: Db, registry: Registry, replica?: ReplicaState): void {
  app.get('/healthz', { schema: { hide: true, response: { 200: Status } } }, async () => ({ status: 'ok' }));

  // Once every migration this build knows has been applied, that stays true for the process.
  let migrationsOk = false;
  app.get('/readyz', { schema: { hide: true, response: { 200: Status, 503: Status } } }, async (_req, reply) => {
    if (!(await ping(db))) return reply.code(503).send({ status: 'unavailable', database: 'unreachable', ...replicaStatus(replica) });
    migrationsOk ||= await migrationsCurrent(db).catch(() => false);
    if (!migrationsOk) return reply.code(503).send({ status: 'unavailable', database: 'migrations pending', ...replicaStatus(replica) });
    return { status: 'ok', database: 'ok', ...replicaStatus(replica) };
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
