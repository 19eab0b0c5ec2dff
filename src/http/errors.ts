/** The §7 error model lives in the framework-free domain layer; the HTTP layer re-exports it. */
export * from '../domain/errors.js';
