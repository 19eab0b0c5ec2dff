/**
 * Pino logger options. Patient data never reaches the log: request bodies are not logged, query
 * values are dropped from logged URLs (only parameter names remain), and any object logged under
 * a patient-ish key is censored by the redaction list as a second line of defence.
 */
import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

const PATIENT_KEYS = [
  'patient', 'first_name', 'last_name', 'date_of_birth', 'phone_number', 'email_address', 'email',
  'patient_address', 'address', 'address1', 'address2', 'insurance', 'insurance_member_id',
  'insurance_group_number', 'notes', 'developer_patient_id', 'sex_at_birth', 'gender', 'password', 'client_secret', 'code_verifier', 'refresh_token',
  'access_token', 'authorization', 'cookie',
];

/** Logs `path?name1&name2` without values: query values may carry patient identifiers. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const names = new URLSearchParams(url.slice(q + 1));
  return `${url.slice(0, q)}?${[...new Set(names.keys())].join('&')}`;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: {
      paths: [
        ...PATIENT_KEYS,
        ...PATIENT_KEYS.map((k) => `*.${k}`),
        ...PATIENT_KEYS.map((k) => `*.*.${k}`),
        'req.headers.authorization',
        'req.headers.cookie',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req(req: FastifyRequest) {
        return { method: req.method, url: redactUrl(req.url), remote: req.ip };
      },
    },
  };
}
