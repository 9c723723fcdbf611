import type { NextFunction, Request, RequestHandler, Response } from 'express';
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
    if (!pay.matches(req.method, req.path)) return next();
    const response = await handleNodeRequest(pay, req, res, req.path, EXPRESS);
    if (response === null) return next();
    sendPayResponse(res, response);
  };
}
