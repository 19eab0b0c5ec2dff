/**
 * 405 Method Not Allowed with `Allow` (RFC 9110 §15.5.6, §10.2.1): a request whose path matches a
 * route under another method is answered 405 listing the methods the path supports, not 404. The
 * routes are recorded as they are registered; a miss (the not-found handler) is matched against
 * them, so the hot path pays nothing.
 */
import type { FastifyInstance } from 'fastify';

interface RoutePattern {
  methods: string[];
  pattern: RegExp;
}

/** A find-my-way route path as a regular expression: `:param` matches one segment, `*` the rest. */
function toRegExp(url: string): RegExp {
  const parts = url.split(/(:[A-Za-z0-9_]+|\*)/).map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}/?$`);
}

/**
 * Records every route registered on `app` from now on, and returns a lookup: the methods a path
 * supports (empty when no route matches it).
 */
export function trackRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes: RoutePattern[] = [];
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    routes.push({ methods, pattern: toRegExp(route.url) });
  });
  return (path) => {
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    return [...allowed].sort();
  };
}
