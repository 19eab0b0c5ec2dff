/**
 * The console page's routes without a browser (docs/console.md, "The console pages"): the page, its
 * script, style sheet and callback answer with a strict CSP and no caching, in the sandbox and in
 * production, each with its environment's console client. The browser test drives the page itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/app.js';

describe('console page routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('serves the page, callback, script and style sheet with a strict CSP and no-store', async () => {
    for (const url of ['/console', '/console/callback', '/console/app.js', '/console/app.css', '/console/favicon.svg']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    const page = (await t.app.inject({ url: '/console' })).body;
    expect(page).toContain('data-client-id="developer-console-sandbox"');
    expect(page).toContain(`data-redirect-uri="${t.config.publicBaseUrl}/console/callback"`);
    expect(page).not.toContain('{{');
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    expect((await t.app.inject({ url: '/console/app.js' })).body.includes('"/console/v1"')).toBe(true);
    expect((await t.app.inject({ url: '/console/' })).statusCode).toBe(302);
  });

  it('is served in production with the production client', async () => {
    const prod = await testApp({ APP_ENV: 'production' });
    try {
      const res = await prod.app.inject({ url: '/console' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('data-client-id="developer-console"');
      expect(res.body).toContain('data-env="production"');
    } finally {
      await prod.close();
    }
  });
});
