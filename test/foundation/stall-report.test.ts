/**
 * The race tests' stall report (test/helpers/stall-report.ts) says where a request stalled: a server
 * that holds a request is reported as having received it and not answered it, with its connection
 * open; a server that answers passes through untouched.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { testPort } from '../helpers/app.js';
import { fetchReportingStalls } from '../helpers/stall-report.js';

describe('fetchReportingStalls', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  });

  async function listening(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    const port = testPort();
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    return `http://127.0.0.1:${port}`;
  }

  it('fails a request the server holds with the server’s counts, not with the test’s timeout', async () => {
    const base = await listening((req, res) => {
      if (req.url !== '/held') res.end('ok'); // '/held' is never answered
    });
    const watched = fetchReportingStalls(server!, 300);
    expect(await (await watched(`${base}/fine`)).text()).toBe('ok');
    const err = await watched(`${base}/held`, { method: 'POST', body: 'x' }).then(() => undefined, (e: unknown) => e as Error);
    expect(err?.message).toMatch(/^no answer to POST http:\/\/127\.0\.0\.1:\d+\/held in 300 ms\nserver: 2 requests received, 1 answered, \d+ connections open(\n|$)/);
  });
});
