/**
 * What the console's tool plugins receive (docs/console.md, "Webhooks", "Request log", "Usage",
 * "Sandbox tools"): the app's config and database, the sandbox's forced outcomes, and from the
 * Console API's guard the ownership check and the security requirement of its token.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../../config.js';
import type { Db } from '../../../db/database.js';
import type { BookingOutcomePolicy } from '../../../domain/appointments/outcome-policy.js';
import type { AttachmentStore } from '../../../domain/attachments/store.js';

export interface ConsoleToolDeps {
  config: Config;
  db: Db;
  /** Outcomes forced on bookings and reschedules (the sandbox fixtures'), as `/v1` appointments get them. */
  outcomes: BookingOutcomePolicy;
  /** Where attachment bytes live: the sandbox reset removes them with their rows (docs/decisions/0016-attachment-files.md). */
  attachments: AttachmentStore;
  /**
   * Throws `not_found` (a DomainError) unless the signed-in console account owns `developerId`: the
   * Console API guard provides it. Every tool route calls it before anything else.
   */
  ownsDeveloper(req: FastifyRequest, developerId: string): void | Promise<void>;
  /** The OpenAPI security requirement of a console token (the guard's scheme). */
  security: Record<string, string[]>[];
}

/** The path parameter of every tool route. */
export const DeveloperParams = Type.Object({ developer_id: Type.String({ minLength: 1, maxLength: 100 }) });
