import { createServer } from 'node:http';
import { apiResolver } from 'next/dist/server/api-utils/node/api-resolver.js';
import type { Pay } from 'paywidget-server';
import { createPagesHandler, createRouteHandlers } from 'paywidget-server/next';
import { describeAdapter, type MountedApp } from './behaviour.js';
import { listen } from './listen.js';

/** App Router: the handlers get real Fetch Requests and Next's `params` promise, as Next 16 gives them. */
async function appRouter(pay: Pay): Promise<MountedApp> {
  const handlers = createRouteHandlers(pay);
  return {
    async send({ method, path, headers, body }) {
      const request = new Request(`http://shop.test/api/pay${path}`, { method, headers, body: body as BodyInit | undefined });
      const segments = path.split('/').filter(Boolean);
      const response = await handlers[method as 'GET' | 'POST'](request, { params: Promise.resolve({ path: segments }) });
      return { status: response.status, headers: response.headers, text: await response.text() };
    },
    close: async () => {},
  };
}

/**
 * Pages Router: Next's own API-route runtime (apiResolver) serves the handler, with the page's
 * `config` deciding whether Next's body parser runs first.
 */
function pagesRouter(pay: Pay, bodyParser: boolean): Promise<MountedApp> {
  const page = { default: createPagesHandler(pay), config: { api: { bodyParser } } };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const match = /^\/api\/pay\/(.*)$/.exec(url.pathname);
    if (!match) {
      res.statusCode = 404;
      res.end('next fallthrough');
      return;
    }
    const query = { ...Object.fromEntries(url.searchParams), path: (match[1] ?? '').split('/').filter(Boolean) };
    void apiResolver(req, res, query, page, { previewModeId: '', previewModeEncryptionKey: '', previewModeSigningKey: '', dev: false }, false);
  });
  return listen(server, '/api/pay');
}

describeAdapter({
  name: 'Next App Router',
  listens: false,
  mount: appRouter,
  fallthrough: { status: 404, text: /NOT_FOUND/ },
});

describeAdapter({
  name: 'Next Pages Router',
  listens: true,
  mount: (pay) => pagesRouter(pay, false),
  mountBehindParser: {
    // Next's default body parser left on: the error names the page config that turns it off.
    mount: (pay) => pagesRouter(pay, true),
    webhooksWork: false,
    fixNamed: /export const config = \{ api: \{ bodyParser: false \} \}/,
  },
  fallthrough: { status: 404, text: /NOT_FOUND/ },
});
