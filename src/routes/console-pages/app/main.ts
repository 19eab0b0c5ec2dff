/**
 * The developer console's browser script (docs/decisions/0015-developer-console.md, docs/console.md,
 * "The console pages"): signs up or in, reads who is signed in, and shows the Apps, one app and the
 * Account views, and the sandbox developer's Webhooks, Request log, Usage and Sandbox views, by the
 * address's fragment (`#apps`, `#apps/{app_id}`, `#account`, `#webhooks`, `#logs`, `#usage`, `#sandbox`), and the
 * "Try a call" (`#try`) and operator (`#operator`) views.
 */
import { createApi, getMe, type Api, type Me } from './api.js';
import { setupAccount } from './account.js';
import { showApp } from './app-detail.js';
import { setupApps } from './apps.js';
import { currentTokens, handleCallback, signIn, signOut, type AuthConfig } from './auth.js';
import { $, all, fail, focusOn, quiet, say } from './dom.js';
import { setupLogs, setupUsage } from './logs.js';
import { setupOperator } from './operator.js';
import { setupSandbox } from './sandbox.js';
import { sandboxDeveloper, toolsApi } from './tools-api.js';
import { setupTryCall } from './try-call.js';
import { setupWebhooks } from './webhooks.js';

const TOOLS = ['webhooks', 'logs', 'usage', 'sandbox'] as const;

const cfg = document.body.dataset as unknown as AuthConfig;

function signedOut(message?: string): void {
  signOut();
  for (const v of all<HTMLElement>('.view')) v.hidden = true;
  $('views').hidden = true;
  $('more-views').hidden = true;
  $('sign-out').hidden = true;
  $('who').textContent = '';
  $('welcome').hidden = false;
  if (message) fail(message);
}

function startViews(api: Api, me: Me): void {
  $('who').textContent = me.email;
  $('views').hidden = false;
  $('more-views').hidden = false;
  $('sign-out').hidden = false;
  $('welcome').hidden = true;
  const apps = setupApps(api, me);
  const account = setupAccount(api);
  // The tools work on the account's sandbox developer (docs/console.md, "Sandbox tools").
  const dev = sandboxDeveloper(me);
  const tools = dev ? toolsApi(api, dev) : null;
  const loaders: Record<string, { load(): Promise<void> }> = {
    ...(tools ? { webhooks: setupWebhooks(tools, dev!), logs: setupLogs(tools), usage: setupUsage(tools), sandbox: setupSandbox(tools) } : {}),
    try: setupTryCall(api, cfg.authUrl),
    operator: setupOperator(),
  };
  for (const a of all<HTMLAnchorElement>('#views a')) if ((TOOLS as readonly string[]).includes(a.dataset.view!) && !tools) a.hidden = true;

  const show = (hash: string, focus: boolean): void => {
    const [name = 'apps', id] = hash.replace(/^#/, '').split('/');
    const view = name === 'account' || loaders[name] ? name : id ? 'app' : 'apps';
    quiet();
    for (const v of all<HTMLElement>('.view')) v.hidden = v.id !== view;
    for (const a of all<HTMLAnchorElement>('#views a, #more-views a')) {
      if (a.dataset.view === (view === 'app' ? 'apps' : view)) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const loaded = view === 'account' ? account.load() : view === 'app' ? showApp(api, decodeURIComponent(id!)) : loaders[view]?.load() ?? apps.load();
    // A secret shown once has taken the focus already (secret.ts); otherwise the view's heading takes it.
    void loaded.then(() => focus && !document.activeElement?.closest('[data-secret-for]') && focusOn($(`${view}-h`))).catch((e: unknown) => fail(e));
  };
  addEventListener('hashchange', () => show(location.hash, true));
  show(location.hash, false);
}

async function main(): Promise<void> {
  $('sign-in').addEventListener('click', () => void signIn(cfg).catch(fail));
  $('sign-up').addEventListener('click', () => void signIn(cfg).catch(fail));
  $('sign-out').addEventListener('click', () => {
    signedOut();
    say('You are signed out.');
    focusOn($('welcome-h'));
  });
  if (location.pathname === '/console/callback') await handleCallback(cfg);
  const tokens = currentTokens(cfg);
  if (!tokens) {
    $('welcome').hidden = false;
    return;
  }
  const api = createApi(tokens, () => signedOut('Your session has ended. Please sign in again.'));
  startViews(api, await getMe(api));
}

main().catch((e: unknown) => {
  if (!$('views').hidden) fail(e);
  else signedOut(e instanceof Error ? e.message : String(e));
});
