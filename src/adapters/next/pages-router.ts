import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { routeNotFound } from '../../core/router.js';
import type { PayResponse } from '../../core/types.js';
import { catchAllPath } from './app-router.js';

// Loaded on first use: the Node bridge brings raw-body (and its Node streams), which an App Router route
// on the edge runtime, importing this same entry, must not evaluate.
let nodeBridge: Promise<typeof import('../node/index.js')> | undefined;

const NEXT_PAGES = { framework: 'next-pages' } as const;

type PagesRequest = IncomingMessage & { query: Partial<Record<string, string | string[]>>; body?: unknown };

export interface PagesHandlerOptions {
  /** Name of the catch-all segment: `pages/api/pay/[...path].ts` → 'path'. */
  param?: string;
}

/**
 * A Pages Router API route for every route of the library, in `pages/api/pay/[...path].ts`:
 *   export default createPagesHandler(pay);
 *   export const config = { api: { bodyParser: false } };   // webhooks need the raw body
 * Next reads `config` statically from the page file itself, so it cannot be re-exported from here.
 */
export function createPagesHandler(payOrOptions?: Pay | PayOptions, { param = 'path' }: PagesHandlerOptions = {}) {
  const pay = resolvePay(payOrOptions);
  return async function paywidgetPagesHandler(req: PagesRequest, res: ServerResponse): Promise<void> {
    const path = catchAllPath(req.query[param]);
    const { handleNodeRequest, sendPayResponse } = await (nodeBridge ??= import('../node/index.js'));
    sendPayResponse(res, (await handleNodeRequest(pay, req, path, NEXT_PAGES)) ?? (req.method === 'OPTIONS' ? options(pay, path) : routeNotFound(path)));
  };
}

/**
 * OPTIONS, which the core leaves to the app: here there is no next(), so one of its paths answers 204
 * with Allow. An app that answers CORS preflights wraps this handler and handles OPTIONS first.
 */
function options(pay: Pay, path: string): PayResponse {
  const allowed = pay.allowedMethods(path);
  if (allowed.length === 0) return routeNotFound(path);
  return { status: 204, headers: { allow: [...allowed, 'OPTIONS'].join(', ') }, body: '' };
}
