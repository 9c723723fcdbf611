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
 * handler (`app.post('/pay/webhooks', …)` sees the whole path) or mounted at one of its own routes
 * (`app.use('/pay/webhooks', …)` sees '/'). Passed to next(), so Express answers 500 and logs the fix, rather
 * than a 404 a webhook sender may give up on. Undefined for a path that is simply not the library's.
 */
function mountedOnARoute(pay: Pay, req: Request, self: RequestHandler): PayError | undefined {
  // req.route is left set by any route handler an earlier match ran (that called next()): ours only if it holds us.
  const candidate = (req as { route?: { path?: unknown; stack?: { handle?: unknown }[] } }).route;
  const route = candidate?.stack?.some((layer) => layer.handle === self) ? candidate : undefined;
  const at = typeof route?.path === 'string' ? route.path : req.path === '/' ? req.baseUrl : undefined;
  if (at === undefined) return undefined;
  const own = pay.routes.find((candidate) => !candidate.path.includes(':') && at.endsWith(candidate.path));
  if (own === undefined) return undefined;
  const mount = at.slice(0, -own.path.length) || '/';
  const how = route !== undefined ? `a route handler (app.${req.method.toLowerCase()}('${at}', payMiddleware(pay)))` : `mounted at '${at}', one of its own routes`;
  return new PayError('CONFIG_INVALID', `paywidget-server: payMiddleware is ${how}, so it cannot see which of its routes was asked for. Mount it with app.use at the path above its routes: app.use('${mount}', payMiddleware(pay)) serves ${pay.routes.map((r) => `${r.method} ${mount === '/' ? '' : mount}${r.path}`).join(', ')}.`);
}
