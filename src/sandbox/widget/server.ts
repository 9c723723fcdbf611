import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FRAME_CORE_JS } from './frame-core.js.js';
import { FRAME_CSS, frameCsp, framePage } from './frame-page.js';
import { FRAME_JS } from './frame.js.js';
import { LOADER_JS } from './loader.js.js';
import { WIDGET_SCRIPT_PATH } from '../../core/widget-script-tag.js';
import { requestUrl } from '../shared/server.js';

export const WIDGET_INTEGRITY_PATH = '/widget/v1/integrity.json';

const LOADER_BYTES = Buffer.from(LOADER_JS, 'utf8');

/** `sha384-<base64>` of the loader's bytes: what a page puts in the script tag's `integrity`. */
export const WIDGET_INTEGRITY = `sha384-${createHash('sha384').update(LOADER_BYTES).digest('base64')}`;

export interface WidgetHost {
  /** `http://127.0.0.1:<port>`: the widget host, another origin than the payment API. */
  url: string;
  close(): Promise<void>;
}

interface Asset {
  type: string;
  body: Buffer;
  headers?: Record<string, string>;
}

function assets(apiUrl: string, widgetUrl: string, pollBudgetMs: number | undefined): Map<string, Asset> {
  const js = 'text/javascript; charset=utf-8';
  // Loaded with crossorigin="anonymous" from the merchant's page: CORS is what lets the browser check the integrity.
  const cors = { 'access-control-allow-origin': '*' };
  const integrity = JSON.stringify({ src: `${widgetUrl}${WIDGET_SCRIPT_PATH}`, integrity: WIDGET_INTEGRITY });
  return new Map<string, Asset>([
    [WIDGET_SCRIPT_PATH, { type: js, body: LOADER_BYTES, headers: cors }],
    [WIDGET_INTEGRITY_PATH, { type: 'application/json; charset=utf-8', body: Buffer.from(integrity), headers: cors }],
    ['/widget/v1/frame.html', { type: 'text/html; charset=utf-8', body: Buffer.from(framePage(apiUrl, pollBudgetMs)), headers: { 'content-security-policy': frameCsp(apiUrl) } }],
    ['/widget/v1/frame-core.js', { type: js, body: Buffer.from(FRAME_CORE_JS) }],
    ['/widget/v1/frame.js', { type: js, body: Buffer.from(FRAME_JS) }],
    ['/widget/v1/frame.css', { type: 'text/css; charset=utf-8', body: Buffer.from(FRAME_CSS) }],
  ]);
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): void {
  res.writeHead(status, { 'content-length': String(body.length), 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache', ...headers });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * The sandbox's widget host, on its own port (the document: the script host differs from the API host).
 * Serves the loader, its published integrity and the frame the loader mounts; the frame calls `apiUrl`.
 */
export async function startWidgetHost(apiUrl: string, port = 0, pollBudgetMs?: number): Promise<WidgetHost> {
  let files = new Map<string, Asset>();
  const server = createServer((req, res) => {
    let path: string;
    try {
      path = requestUrl(req.url).pathname;
    } catch (error) {
      return answer(req, res, 400, { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from(`${(error as Error).message}\n`));
    }
    const asset = files.get(path);
    if (!asset) return answer(req, res, 404, { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from(`No widget file at ${path}.\n`));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return answer(req, res, 405, { 'content-type': 'text/plain; charset=utf-8', allow: 'GET, HEAD' }, Buffer.from('Use GET.\n'));
    }
    answer(req, res, 200, { 'content-type': asset.type, ...asset.headers }, asset.body);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  files = assets(apiUrl, url, pollBudgetMs);
  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
