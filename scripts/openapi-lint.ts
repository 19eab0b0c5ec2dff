/**
 * Lints the service's OpenAPI document with Redocly (recommended rules, `redocly.yaml`) and Spectral
 * (`spectral:oas`, `.spectral.yaml`), failing on any error or warning. The document is the one a
 * sandbox with the admin API enabled serves (the fullest one), built over an in-memory database.
 *
 *   npm run lint:openapi
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceOpenApi } from '../clients/typescript/scripts/generate.js';

const dir = await mkdtemp(join(tmpdir(), 'carebook-openapi-'));
const file = join(dir, 'openapi.json');
let failed = false;
try {
  const doc = await serviceOpenApi({ ADMIN_TOKEN: 'openapi-lint-admin-token-0123456789abcdef' });
  await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  const run = (cmd: string, args: string[]) => {
    process.stdout.write(`\n$ ${cmd} ${args.join(' ')}\n`);
    const r = spawnSync(cmd, args, { stdio: 'inherit' });
    if (r.status !== 0) failed = true;
  };
  // Redocly exits non-zero on errors only: warnings are made fatal by counting them in its JSON report.
  run('npx', ['--no-install', 'redocly', 'lint', '--max-problems', '1000', file]);
  const report = spawnSync('npx', ['--no-install', 'redocly', 'lint', '--format', 'json', file], { encoding: 'utf8' });
  const totals = (JSON.parse(report.stdout || '{}') as { totals?: { errors: number; warnings: number } }).totals;
  if (!totals || totals.errors || totals.warnings) {
    process.stdout.write(`Redocly: ${totals ? `${totals.errors} errors, ${totals.warnings} warnings` : 'no report'}\n`);
    failed = true;
  }
  run('npx', ['--no-install', 'spectral', 'lint', '--fail-severity', 'warn', '--ruleset', '.spectral.yaml', file]);
} finally {
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
