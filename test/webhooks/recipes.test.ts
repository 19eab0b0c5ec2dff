/**
 * The signature recipes of docs/webhooks.md ("Verifying a delivery") run for real: the Node.js,
 * Python and Go code exactly as the developer console's Webhooks view shows it (the page renders
 * `RECIPES` of src/routes/console-pages/app/recipes.ts; test/browser/console-extras.test.ts checks the
 * page against the document, and this file checks `RECIPES` against it too), each written to a file
 * and run by its own language's runtime against a real delivery: a sandbox fixture's webhook sent by
 * the delivery worker to a real local receiver, signed with two keys (a key change's overlap). Each
 * recipe must accept the delivery under either key and refuse a tampered body, a changed timestamp
 * and a key that did not sign it.
 *
 * Go is Debian's `golang-go` (`.ci/run` installs it when `go` is missing); Python is the machine's
 * `python3`. Outside CI a missing runtime skips its language with a message saying so; under
 * `CI=true` it fails. Go's build cache and module folders are in a temporary directory.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvaluatorOnce } from '../../src/domain/appointments/evaluator.js';
import { ensureSandboxFixtures } from '../../src/domain/directory/sandbox-fixtures.js';
import { sandboxBookingOutcomes } from '../../src/domain/sandbox/booking-outcomes.js';
import { RECIPES } from '../../src/routes/console-pages/app/recipes.js';
import { createWebhookWorker } from '../../src/webhooks/worker.js';
import { consoleAccountWithMachine, toolsBase, type ConsoleAccount } from '../console/tools-env.js';
import { testApp, type TestApp } from '../helpers/app.js';
import { bearer } from '../helpers/auth.js';
import { engineName } from '../helpers/db.js';
import { startReceiver, type Receiver } from './receiver.js';

/** One verification a harness runs: a body (base64), the two headers, a key. */
interface Case { name: string; body: string; timestamp: string; signature: string; key: string; want: boolean }

/** Whether `cmd` runs here; under CI=true a missing runtime is a failure, elsewhere a skip with a message. */
function runtime(cmd: string, args: string[]): { present: boolean; skip: boolean; message: string } {
  const present = spawnSync(cmd, args, { encoding: 'utf8' }).status === 0;
  const ci = process.env.CI === 'true';
  const message = `${cmd} is not installed (Debian: apt-get install ${cmd === 'go' ? 'golang-go' : 'python3'}; .ci/run installs it)`;
  if (!present && !ci) console.warn(`SKIPPED: the ${cmd} signature recipe, ${message}`);
  return { present, skip: !present && !ci, message };
}

const go = runtime('go', ['version']);
const python = runtime('python3', ['--version']);

/** The three fenced blocks of docs/webhooks.md. */
function docRecipes(): Record<string, string> {
  const doc = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const block = (lang: string): string => new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(doc)![1]!.replace(/\n$/, '');
  return { node: block('js'), python: block('python'), go: block('go') };
}

/** The harnesses: each reads the cases as JSON on stdin and prints one `name true|false` line per case. */
const NODE_HARNESS = `import { readFileSync } from 'node:fs';
import { verifyCarebookWebhook } from './verify.mjs';
const cases = JSON.parse(readFileSync(0, 'utf8'));
for (const c of cases) {
  const headers = { 'webhook-id': 'x', 'webhook-timestamp': c.timestamp, 'webhook-signature': c.signature };
  console.log(c.name, verifyCarebookWebhook(Buffer.from(c.body, 'base64').toString('utf8'), headers, c.key));
}
`;
const PYTHON_HARNESS = `import base64, json, sys
from carebook_verify import verify_carebook_webhook
for c in json.load(sys.stdin):
    headers = {"webhook-id": "x", "webhook-timestamp": c["timestamp"], "webhook-signature": c["signature"]}
    print(c["name"], "true" if verify_carebook_webhook(base64.b64decode(c["body"]), headers, c["key"]) else "false")
`;
const GO_HARNESS = `package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"carebookrecipe/carebook"
)

func main() {
	var cases []struct{ Name, Body, Timestamp, Signature, Key string }
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	for _, c := range cases {
		body, err := base64.StdEncoding.DecodeString(c.Body)
		if err != nil {
			panic(err)
		}
		h := http.Header{}
		h.Set("Webhook-Id", "x")
		h.Set("Webhook-Timestamp", c.Timestamp)
		h.Set("Webhook-Signature", c.Signature)
		fmt.Println(c.Name, carebook.VerifyWebhook(body, h, c.Key, 5*time.Minute))
	}
}
`;

describe(`the webhook signature recipes, run against a real delivery (${engineName})`, () => {
  let t: TestApp;
  let rx: Receiver;
  let dir: string;
  let account: ConsoleAccount;
  const oldKey = randomBytes(32).toString('base64');
  const newKey = randomBytes(32).toString('base64');
  let cases: Case[] = [];

  beforeAll(async () => {
    t = await testApp({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', HOST: '127.0.0.1' });
    await t.db.transaction().execute((trx) => ensureSandboxFixtures(trx));
    dir = await mkdtemp(join(tmpdir(), 'carebook-recipes-'));
    account = await consoleAccountWithMachine(t);
    rx = await startReceiver([oldKey, newKey]);
    const put = (key: string) => t.app.inject({ method: 'PUT', url: `${toolsBase(account.developerId)}/webhook`, headers: bearer(account.token), payload: { url: rx.url, key } });
    // A key change: the replaced key keeps signing for 24 hours, so the delivery carries both signatures.
    expect((await put(oldKey)).statusCode).toBe(200);
    expect((await put(newKey)).statusCode).toBe(200);
    // The `failed` fixture's booking; the evaluator settles it; the delivery worker sends its webhook.
    const run = await t.app.inject({ method: 'POST', url: `${toolsBase(account.developerId)}/sandbox/fixtures/failed/run`, headers: bearer(account.token) });
    expect(run.statusCode, run.body).toBe(201);
    await runEvaluatorOnce(t.db, { env: 'sandbox', outcomes: sandboxBookingOutcomes });
    await createWebhookWorker(t.db, { env: 'sandbox', allowPrivateTargets: true, reflectPrivateAnswers: true, baseDelayMs: 10, maxDelayMs: 20 }).runOnce();
    expect(rx.received).toHaveLength(1);
    const hook = rx.received[0]!;
    // The receiver's own check (test/webhooks/receiver.ts) agrees: both keys signed it.
    expect(hook.verifiedWith).toEqual([oldKey, newKey]);
    const raw = Buffer.from(hook.raw, 'utf8');
    expect(raw.length).toBe(Number(hook.headers['content-length']));
    const timestamp = String(hook.headers['webhook-timestamp']);
    const signature = String(hook.headers['webhook-signature']);
    expect(signature.split(';')).toHaveLength(2);
    // One byte changed in the middle (still ASCII, so still text).
    const tampered = Buffer.from(raw);
    tampered[raw.length >> 1] = raw[raw.length >> 1]! ^ 0x01;
    const b64 = (b: Buffer): string => b.toString('base64');
    cases = [
      { name: 'new-key', body: b64(raw), timestamp, signature, key: newKey, want: true },
      { name: 'old-key', body: b64(raw), timestamp, signature, key: oldKey, want: true },
      { name: 'tampered-body', body: b64(tampered), timestamp, signature, key: newKey, want: false },
      { name: 'changed-timestamp', body: b64(raw), timestamp: String(Number(timestamp) - 1), signature, key: newKey, want: false },
      { name: 'other-key', body: b64(raw), timestamp, signature, key: randomBytes(32).toString('base64'), want: false },
    ];
    expect(tampered.equals(raw)).toBe(false);
  }, 120_000);
  afterAll(async () => {
    await rx?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs a harness and reads its verdicts. */
  function verdicts(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): Record<string, boolean> {
    const res = spawnSync(cmd, args, { cwd, input: JSON.stringify(cases), encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
    if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${res.status}: ${res.stderr}${res.error ? String(res.error) : ''}`);
    return Object.fromEntries(res.stdout.trim().split('\n').map((line) => {
      const [name, v] = line.trim().split(' ');
      return [name!, v === 'true'];
    }));
  }
  const wanted = (): Record<string, boolean> => Object.fromEntries(cases.map((c) => [c.name, c.want]));

  it('the page shows exactly the recipes of docs/webhooks.md', () => {
    expect(Object.fromEntries(Object.entries(RECIPES).map(([lang, r]) => [lang, r.code]))).toEqual(docRecipes());
  });

  it('Node.js: accepts the delivery under either key; refuses a tampered body, a changed timestamp, another key', async () => {
    const cwd = join(dir, 'node');
    await mkdir(cwd);
    await writeFile(join(cwd, 'verify.mjs'), RECIPES.node!.code + '\n');
    await writeFile(join(cwd, 'run.mjs'), NODE_HARNESS);
    expect(verdicts(process.execPath, ['run.mjs'], cwd)).toEqual(wanted());
  });

  it.skipIf(python.skip)(python.skip ? `Python: SKIPPED, ${python.message}` : 'Python: the same, with python3', async () => {
    if (!python.present) throw new Error(`CI=true and ${python.message}`);
    const cwd = join(dir, 'python');
    await mkdir(cwd);
    await writeFile(join(cwd, 'carebook_verify.py'), RECIPES.python!.code + '\n');
    await writeFile(join(cwd, 'run.py'), PYTHON_HARNESS);
    expect(verdicts('python3', ['run.py'], cwd, { PYTHONDONTWRITEBYTECODE: '1' })).toEqual(wanted());
  });

  it.skipIf(go.skip)(go.skip ? `Go: SKIPPED, ${go.message}` : 'Go: the same, built and run with go', async () => {
    if (!go.present) throw new Error(`CI=true and ${go.message}`);
    const cwd = join(dir, 'go');
    await mkdir(join(cwd, 'carebook'), { recursive: true });
    await writeFile(join(cwd, 'go.mod'), 'module carebookrecipe\n\ngo 1.19\n');
    await writeFile(join(cwd, 'carebook', 'verify.go'), RECIPES.go!.code + '\n');
    await writeFile(join(cwd, 'main.go'), GO_HARNESS);
    // Standard library only: no module download (GOPROXY=off); caches in the temporary directory.
    const env = { GOCACHE: join(dir, 'go-cache'), GOPATH: join(dir, 'go-path'), GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local', GO111MODULE: 'on', GOTELEMETRY: 'off' };
    expect(verdicts('go', ['run', '.'], cwd, env)).toEqual(wanted());
  }, 120_000);
});
