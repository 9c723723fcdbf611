import Router from '@koa/router';
import type { Context } from 'koa';
import { toPayError } from '../../core/errors.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import type { PayResponse } from '../../core/types.js';
import { toPayRequest, type ParsedBodyHolder } from '../node/index.js';

export interface PayRouterOptions {
  /** Where the routes live, e.g. '/pay'. */
  prefix?: string;
}

/**
 * A `@koa/router` router with every route of the library: `app.use(payRouter(pay, { prefix: '/pay' }).routes())`.
 * Mount it before a body parser; after `@koa/bodyparser` it uses `ctx.request.rawBody`.
 */
export function payRouter(payOrOptions?: Pay | PayOptions, { prefix = '' }: PayRouterOptions = {}): Router {
  const pay = resolvePay(payOrOptions);
  const router = prefix ? new Router({ prefix }) : new Router();

  const handle = async (ctx: Context) => {
    const path = ctx.path.slice(prefix.length) || '/';
    let response: PayResponse | null;
    try {
      response = await pay.handle(await toPayRequest(ctx.req, path, pay.maxBodyBytes, ctx.request as ParsedBodyHolder));
    } catch (error) {
      response = toPayError(error).toResponse();
    }
    if (response === null) return;
    ctx.status = response.status;
    ctx.set(response.headers);
    ctx.body = typeof response.body === 'string' ? response.body : Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
  };

  for (const route of pay.routes) router.register(route.path, [route.method], handle);
  return router;
}
