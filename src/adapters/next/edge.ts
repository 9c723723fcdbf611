import { PayError } from '../../core/errors.js';
import type { createPagesHandler as nodePagesHandler } from './pages-router.js';

/**
 * `paywidget-server/next` where bundlers build for the edge runtime (the `edge-light` condition, which Next
 * and Vercel resolve edge code with): the App Router handlers without the Pages Router's Node bridge. webpack
 * follows the bridge's import() into an edge bundle, and fails on the Node modules raw-body needs.
 */
export { createRouteHandlers, type RouteHandlerOptions } from './app-router.js';
export type { PagesHandlerOptions } from './pages-router.js';

/** A Pages Router API route on the edge runtime gets no Node req and res to read: its handler says what to change. */
export const createPagesHandler: typeof nodePagesHandler = () => async () => {
  throw new PayError('CONFIG_INVALID', "paywidget-server: createPagesHandler runs on Node's req and res, and this API route is built for the edge runtime, which has neither. Remove runtime: 'edge' from the page's config (pages/api/pay/[...path].ts), or use createRouteHandlers in an App Router route (app/api/pay/[...path]/route.ts), which runs on the edge runtime too.");
};
