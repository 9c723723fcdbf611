import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Pay, PayOptions } from '../../core/pay.js';
import { resolvePay } from '../../core/resolve-pay.js';
import { routeNotFound } from '../../core/router.js';
import { handleNodeRequest, sendPayResponse } from '../node/index.js';
import { catchAllPath } from './app-router.js';

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
    sendPayResponse(res, (await handleNodeRequest(pay, req, path)) ?? routeNotFound(path));
  };
}
