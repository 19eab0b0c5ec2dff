/**
 * Hand-written `/docs` examples of the Console API (docs/console.md), merged into `EXAMPLES`
 * (src/http/openapi-examples.ts), where a generated one would not show what the answer means: usage
 * per app and day with each app's clients, and the rate-limit headroom (docs/console.md, "Usage").
 */
import type { OperationExamples } from './openapi-example-types.js';

const BOOKING_APP = { app_id: 'ap_O8wPewOmmyczY0T0', app_name: 'Booking app' };
const WIDGET_APP = { app_id: 'ap_q-jo011Ck0jHZncl', app_name: 'Booking widget' };

/** The Console API's hand-written examples. */
export const consoleExamples: Record<string, OperationExamples> = {
  'GET /console/v1/developers/{developer_id}/usage': {
    response: {
      data: {
        days: [
          {
            day: '2026-11-26', ...BOOKING_APP, requests: 140, errors: 7, error_rate: 0.05,
            clients: [
              { client_id: 'cl_4mATbSbGODNG4Cd_M8C5fQ', kind: 'machine', requests: 120, errors: 6, error_rate: 0.05 },
              { client_id: 'uc_fDMhT_zxBdVq55iu_mcyVQ', kind: 'user', requests: 20, errors: 1, error_rate: 0.05 },
            ],
          },
          {
            day: '2026-11-26', ...WIDGET_APP, requests: 12, errors: 0, error_rate: 0,
            clients: [{ client_id: 'cl_nnEamtOX3hnMQKO3eHXNzw', kind: 'machine', requests: 12, errors: 0, error_rate: 0 }],
          },
          {
            day: '2026-11-25', ...BOOKING_APP, requests: 96, errors: 12, error_rate: 0.125,
            clients: [{ client_id: 'cl_4mATbSbGODNG4Cd_M8C5fQ', kind: 'machine', requests: 96, errors: 12, error_rate: 0.125 }],
          },
        ],
        rate_limit: {
          per_minute: 1200,
          used_last_minute: 9,
          remaining: 1191,
          by_app: [{ ...BOOKING_APP, requests: 8 }, { ...WIDGET_APP, requests: 1 }],
          by_client: [
            { client_id: 'cl_4mATbSbGODNG4Cd_M8C5fQ', app_id: BOOKING_APP.app_id, requests: 8 },
            { client_id: 'cl_nnEamtOX3hnMQKO3eHXNzw', app_id: WIDGET_APP.app_id, requests: 1 },
          ],
        },
      },
    },
  },
};
