import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { PayError } from '../../core/errors.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { handleNodeRequest, sendPayResponse } from '../node/index.js';

const EXPRESS = { framework: 'express' } as const;

/**
 * Express middleware for every route of the library, relative to where it is mounted:
 * `app.use('/pay', payMiddleware())`. Paths that are not ours call `next()`.
 * Mount it before `express.json()`, or keep the raw body with `express.json({ verify })`.
 */
export function payMiddleware(payOrOptions?: Pay | PayOptions): RequestHandler {
  const pay = resolvePay(payOrOptions);
  return async function paywidget(req: Request, res: Response, next: NextFunction) {
    // req.path is relative to the mount path in Express 4 and 5.
    if (!pay.matches(req.method, req.path)) return next(mountedOnARoute(pay, req, paywidget));
    const response = await handleNodeRequest(pay, req, res, req.path, EXPRESS);
    if (response === null) return next();
    sendPayResponse(res, response);
  };
}

/**
 * A mount no request can reach a route through, found on a request that is not one: the middleware as a route
 * handler (`app.post('/pay/webhooks', …)` or `app.all('/pay/*rest', …)` sees the whole path) or mounted at one of
 * its own routes (`app.use('/pay/webhooks', …)` sees '/'). Passed to next(), so Express answers 500 and logs the
 * fix, rather than a 404 a webhook sender may give up on. Undefined for a path that is simply not the library's.
 */
function mountedOnARoute(pay: Pay, req: Request, self: RequestHandler): PayError | undefined {
  // req.route is left set by any route handler an earlier match ran (that called next()): ours only if it holds us.
  const candidate = (req as { route?: { path?: unknown; methods?: Record<string, boolean>; stack?: { handle?: unknown }[] } }).route;
  const route = candidate?.stack?.some((layer) => layer.handle === self) ? candidate : undefined;
  // OPTIONS is the app's (its CORS), whatever the mount.
  if (req.method === 'OPTIONS') return undefined;
  let mount: string | undefined;
  if (route !== undefined) {
    // A route that can match the library's paths at its root (app.all('/*splat', …)) serves them, and the app's own
    // paths reach it too; one that cannot ('/pay/*rest', '/:tenant/pay/*rest', '/pay/webhooks') never serves a route.
    if (servesAtRoot(route.path)) return undefined;
    const above = mountAbove(req.path, (rest) => pay.matches(req.method, rest));
    // In a router, the path is the router's: the app mounts it below the router's own mount.
    mount = above === undefined ? undefined : `${req.baseUrl}${above === '/' ? '' : above}` || '/';
  } else if (req.path === '/' && Object.keys(req.params ?? {}).length === 0) {
    // (A mount with params, app.use('/:tenant', …), is matched by any path: '/webhooks' there is tenant 'webhooks'.)
    // Only a route without params: the app's own '/api/payments/widget' is no mistake.
    mount = mountAbove(req.baseUrl, (rest) => pay.routes.some((own) => own.path === rest && !own.path.includes(':')));
  }
  if (mount === undefined) return undefined;
  // app.all() registers every method (Router#all, `_all`): one verb is app.<verb>().
  const verbs = Object.keys(route?.methods ?? {});
  const verb = verbs.length === 1 && verbs[0] !== '_all' ? verbs[0] : 'all';
  const how = route !== undefined ? `a route handler (app.${verb}('${String(route.path)}', payMiddleware(pay)))` : `mounted at '${req.baseUrl}', one of its own routes`;
  return new PayError('CONFIG_INVALID', `paywidget-server: payMiddleware is ${how}, so it cannot see which of its routes was asked for. Mount it with app.use at the path above its routes: app.use('${mount}', payMiddleware(pay)) serves ${pay.routes.map((r) => `${r.method} ${mount === '/' ? '' : mount}${r.path}`).join(', ')}.`);
}

/**
 * Whether a route path (Express 5's syntax or 4's, an array of them, a RegExp) can match the library's paths at its
 * root: a leading wildcard ('/*splat', '{*splat}', '*', '(.*)') or params alone ('/:a/:b') can.
 */
function servesAtRoot(path: unknown): boolean {
  if (Array.isArray(path)) return path.some(servesAtRoot);
  if (path instanceof RegExp) return path.test('/webhooks');
  if (typeof path !== 'string') return true; // of a shape unknown here: not refused
  const segments = path.split('/').filter((segment) => segment !== '');
  return segments.length > 0 && (/^[*{(]/.test(segments[0]!) || segments.every((segment) => segment.startsWith(':')));
}

/** Where the library would have to be mounted for the end of `path` to be one of its routes: the part before it. */
function mountAbove(path: string, isRoute: (rest: string) => boolean): string | undefined {
  for (let at = path.indexOf('/'); at !== -1; at = path.indexOf('/', at + 1)) {
    if (isRoute(path.slice(at))) return path.slice(0, at) || '/';
  }
  return undefined;
}
