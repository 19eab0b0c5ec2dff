/** The dependencies every Practice API plugin receives (docs/decisions/0014-practice-workspace.md): the same as the `/v1` areas. */
import type { Config } from '../../config.js';
import type { Db } from '../../db/database.js';
import type { BookingOutcomePolicy } from '../../domain/appointments/outcome-policy.js';
import type { ChangeSignal } from '../../lib/change-signal.js';

/** What every Practice API plugin receives: the same as the `/v1` areas. */
export interface PracticeRouteDeps {
  config: Config;
  db: Db;
  /** Outcomes forced on bookings and reschedules (the sandbox fixtures'), as `/v1` appointments get them. */
  outcomes: BookingOutcomePolicy;
  /**
   * The application's appointment-change signal (made by `buildApp`): notified by `/v1` appointment
   * writes and by the practice's moves, it wakes the live event streams at once. Without it a stream
   * sees changes at its next poll.
   */
  appointmentChanges?: ChangeSignal;
  /** How often a live events stream reads the outbox (ms); default 500. */
  eventPollMs?: number;
}

