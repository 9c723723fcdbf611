import Router from '@koa/router';
import type { Context } from 'koa';
import { PayError } from '../../core/errors.js';
import { describeKind } from '../../core/option-types.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { optionsAnswer } from '../../core/router.js';
import { handleNodeRequest, type ParsedBodyHolder } from '../node/index.js';

/** Options of `payRouter()`. */
export interface PayRouterOptions {
  /** Where the routes live, e.g. '/pay'. */
  prefix?: string | undefined;
}

/**
 * A `@koa/router` router with every route of the library: `app.use(payRouter(pay, { prefix: '/pay' }).routes())`.
 * Mount it before a body parser; after `@koa/bodyparser` it uses `ctx.request.rawBody`.
 */
export function payRouter(payOrOptions?: Pay | PayOptions, options: PayRouterOptions = {}): Router {
  // The Pay first: app.use(payRouter) hands it (ctx, next), and the ctx is what that error names.
  const pay = resolvePay(payOrOptions);
  const prefix = routerPrefix(options);
  // Case-sensitive like the core router and the other adapters: /Webhooks is not one of its paths.
  // '/pay/' as Express's app.use('/pay/') takes it: @koa/router would join it into '/pay//webhooks'.
  const mount = prefix.replace(/\/+$/, '');
  const router = new Router({ sensitive: true, ...(mount ? { prefix: mount } : {}) });

  // A route with params takes as many segments from the end of the path as sent (not the params, which
  // @koa/router decoded and leaves as they are when malformed), so it works under any parent router and the
  // core decodes each segment itself, refusing a malformed one.
  const handle = (pattern: string) => {
    const segments = pattern.includes(':') ? pattern.split('/').length - 1 : 0;
    return async (ctx: Context, next: () => Promise<unknown>) => {
      const path = segments > 0 ? lastSegments(ctx.path, segments) : pattern;
      // OPTIONS that the app's CORS handling left through: its Allow from the core, since router.all() would
      // have @koa/router's allowedMethods() list every method there is.
      const response = await handleNodeRequest(pay, ctx.req, ctx.res, path, { framework: 'koa', parsed: ctx.request as ParsedBodyHolder, native: ctx }) ?? optionsAnswer(pay, path);
      if (response === null) return next();
      ctx.status = response.status;
      ctx.set(response.headers);
      ctx.body = typeof response.body === 'string' ? response.body : Buffer.from(response.body.buffer, response.body.byteOffset, response.body.byteLength);
      // Koa's body setter names a type of its own (application/octet-stream for bytes): an upstream refusal that named none passes through with none.
      if (response.headers['content-type'] === undefined) ctx.remove('Content-Type');
      // The body's setter measured the (empty) body; a HEAD answer keeps the length its GET would have had.
      const length = response.headers['content-length'];
      if (length !== undefined) ctx.length = Number(length);
    };
  };

  // Every method reaches the core, which answers 405 with Allow like the other adapters.
  for (const path of new Set(pay.routes.map((route) => route.path))) router.all(path, handle(path));
  return router;
}

/** The last `count` segments of a path as sent, a trailing slash (which @koa/router lets match) left out. */
function lastSegments(path: string, count: number): string {
  const parts = path.split('/');
  if (parts.at(-1) === '') parts.pop();
  return '/' + parts.slice(-count).join('/');
}

const ROUTER_OPTIONS: readonly (keyof PayRouterOptions)[] = ['prefix'];
const USAGE = "payRouter(pay, { prefix: '/pay' })";

/**
 * The prefix of payRouter's options, or CONFIG_INVALID: plain JavaScript would otherwise take
 * payRouter(pay, '/pay') or { prefix: 'pay' } without a word and answer every request 404.
 */
function routerPrefix(options: unknown): string {
  const refuse = (problem: string, names = ['prefix']) => new PayError('CONFIG_INVALID', `paywidget-server: ${problem}.`, { details: { options: names } });
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    const hint = typeof options === 'string' ? `payRouter(pay, { prefix: ${JSON.stringify(options.startsWith('/') || options === '' ? options : `/${options}`)} })` : USAGE;
    throw refuse(`payRouter takes its options as an object, got ${describeKind(options)}: write ${hint}`);
  }
  const unknown = Object.keys(options).filter((key) => !(ROUTER_OPTIONS as readonly string[]).includes(key));
  if (unknown.length > 0) throw refuse(`payRouter has no option ${unknown.join(', ')}; its options are ${ROUTER_OPTIONS.join(', ')}, as in ${USAGE}. Check the spelling`, unknown);
  const { prefix = '' } = options as PayRouterOptions;
  if (typeof prefix !== 'string') throw refuse(`payRouter's prefix must be a path such as '/pay', got ${describeKind(prefix)}`);
  // @koa/router does not add the slash: its routes would be 'pay/webhooks', which no request path matches.
  if (prefix !== '' && !prefix.startsWith('/')) {
    throw refuse(`payRouter's prefix must begin with '/', as @koa/router and koa-mount require: write { prefix: ${JSON.stringify(`/${prefix}`)} }, not { prefix: ${JSON.stringify(prefix)} } (every request would otherwise answer 404)`);
  }
  return prefix;
}
