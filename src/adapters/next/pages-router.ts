import type { IncomingMessage, ServerResponse } from 'node:http';
import { PayError } from '../../core/errors.js';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { catchAllPath, notARoute } from './catch-all.js';

// Loaded on first use: the Node bridge brings raw-body (and its Node streams), which an App Router route
// on the edge runtime, importing this same entry, must not evaluate.
let nodeBridge: Promise<typeof import('../node/index.js')> | undefined;

const NEXT_PAGES = { framework: 'next-pages' } as const;

type PagesRequest = IncomingMessage & { query: Partial<Record<string, string | string[]>>; body?: unknown };

/** Options of `createPagesHandler()`. */
export interface PagesHandlerOptions {
  /** Name of the catch-all segment: `pages/api/pay/[...path].ts` → 'path'. */
  param?: string | undefined;
}

/**
 * A Pages Router API route for every route of the library, in `pages/api/pay/[...path].ts`:
 *   export default createPagesHandler(pay);
 *   export const config = { api: { bodyParser: false } };   // webhooks need the raw body
 * Next reads `config` statically from the page file itself, so it cannot be re-exported from here.
 */
export function createPagesHandler(payOrOptions?: Pay | PayOptions, { param = 'path' }: PagesHandlerOptions = {}) {
  const pay = resolvePay(payOrOptions);
  const catchAll = { param, factory: 'createPagesHandler' } as const;
  return async function paywidgetPagesHandler(req: PagesRequest, res: ServerResponse): Promise<void> {
    // Exported from an App Router route file, it gets a Fetch Request (and a context), not Node's req and res.
    if (typeof (req as { headers?: { get?: unknown } } | undefined)?.headers?.get === 'function') throw notNodeRequest();
    // No catch-all segment at all: none of the segments' values is a catch-all's array (else notARoute names it).
    // (The segments are worked out only off the usual path, where the catch-all holds the route's path.)
    if (req.query[param] === undefined && !Object.values(segmentParams(req)).some(Array.isArray) && endsInARoute(pay, req.url)) throw noCatchAllPage(param);
    const { handleNodeRequest, sendPayResponse } = await (nodeBridge ??= import('../node/index.js'));
    sendPayResponse(res, (await handleNodeRequest(pay, req, res, catchAllPath(req.query[param]), NEXT_PAGES)) ?? notARoute(pay, req.method ?? 'GET', { ...segmentParams(req), [param]: req.query[param] }, catchAll));
  };
}

/**
 * `req.query` without what the query string put there: what Next took from the page's dynamic segments (a repeated
 * ?x=1&x=2 is an array too). A segment's value wins over a query key of its name, so a key is left out only when
 * the query string alone gives its value.
 */
function segmentParams(req: PagesRequest): Record<string, unknown> {
  const search = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const fromSearch = (key: string, value: unknown) => {
    const sent = search.getAll(key);
    return sent.length > 1 ? Array.isArray(value) && value.length === sent.length && value.every((v, i) => v === sent[i]) : sent.length === 1 && value === sent[0];
  };
  return Object.fromEntries(Object.entries(req.query).filter(([key, value]) => !fromSearch(key, value)));
}

/**
 * Whether the request's path ends in one of the library's routes (`/api/pay/webhooks`): with no catch-all
 * segment in the query, the page is a file named after the route, which Next hands no path.
 */
function endsInARoute(pay: Pay, url: string | undefined): boolean {
  const segments = (url ?? '/').split('?')[0]!.split('/').filter((segment) => segment !== '');
  for (let count = 1; count <= Math.min(3, segments.length); count++) {
    const path = `/${segments.slice(-count).join('/')}`;
    if (pay.allowedMethods(path).length > 0) return true;
  }
  return false;
}

/** Thrown, so that Next answers 500 and logs the fix: a 404 would tell a webhook sender the event has no receiver. */
function noCatchAllPage(param: string): PayError {
  return new PayError('CONFIG_INVALID', `paywidget-server: createPagesHandler is the default export of a page with no catch-all segment (pages/api/pay/webhooks.ts, say), so Next hands it no path and it cannot tell which route was asked for. Name the page pages/api/pay/[...${param}].ts: it serves every route below /api/pay, POST /api/pay/webhooks among them.`);
}

/** Thrown, so that Next answers 500 and logs the fix. */
function notNodeRequest(): PayError {
  return new PayError('CONFIG_INVALID', 'paywidget-server: the createPagesHandler handler was called with a Fetch Request, as an App Router route handler is, not with the Pages Router\'s req and res. In app/, use createRouteHandlers: export const { GET, POST, OPTIONS } = createRouteHandlers(pay), in app/api/pay/[...path]/route.ts. createPagesHandler is for pages/api.');
}
