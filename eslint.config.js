// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'coverage/**', 'clients/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['bench/**', 'test/**', 'bin/**', 'docs/**'],
    rules: { 'no-console': 'off' },
  },
  {
    // The quickstart's samples are plain Node.js scripts.
    files: ['docs/**/*.mjs'],
    languageOptions: { globals: { URLSearchParams: 'readonly' } },
  },
  {
    // Framework-free domain: never import Fastify (see docs/architecture.md).
    files: ['src/domain/**', 'src/db/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['fastify', '@fastify/*', '**/http/*', '**/routes/*', '**/auth/routes/*'], message: 'domain and db code must not depend on the HTTP layer' }] }],
    },
  },
  {
    // Generic code outside the HTTP tier (helpers, background work, the operator's tool) does not
    // depend on it either: what both need lives in src/lib or src/db.
    files: ['src/lib/**', 'src/webhooks/**', 'src/cli/**', 'src/jobs/**', 'src/workers.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/http/*', '**/routes/*', '**/auth/routes/*'], message: 'only the HTTP tier imports src/http and the routes' }] }],
    },
  },
  {
    // Hand-built SQL lives behind one boundary, src/db/fast/ (docs/decisions/0012-fast-paths.md).
    files: ['src/**'],
    ignores: ['src/db/fast/**'],
    rules: {
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='CompiledQuery'][property.name='raw']", message: 'hand-built SQL belongs in src/db/fast/ (docs/decisions/0012-fast-paths.md)' }],
    },
  },
  {
    // Migrations are frozen history: they import Kysely and nothing of the application, whose code changes.
    files: ['src/db/migrations/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['*', '!kysely'], message: 'a migration imports only kysely' }] }],
    },
  },
);
