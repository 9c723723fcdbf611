export { createRouteHandlers, type RouteHandlerOptions } from './app-router.js';
export { createPagesHandler, type PagesHandlerOptions } from './pages-router.js';
