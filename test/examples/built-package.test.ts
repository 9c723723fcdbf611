/**
 * The package as users install it: the tsup build loads in ESM and CommonJS, and the Next example,
 * built with `next build` and served by `next start`, answers over real HTTP against the sandbox.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';
import { startOnFreePort } from '../helpers/start-on-free-port.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const nextBin = `${root}node_modules/next/dist/bin/next`;
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

beforeAll(async () => {
  await run('npx', ['tsup', '--silent'], { cwd: root, env });
}, 240_000);

describe('the built package', () => {
  const subpaths = ['paywidget-server', 'paywidget-server/express', 'paywidget-server/next', 'paywidget-server/koa', 'paywidget-server/sandbox', 'paywidget-server/testing', 'paywidget-server/redis'];

  it.each(subpaths)('%s loads with require() and import()', async (name) => {
    const cjs = await run(process.execPath, ['-e', `console.log(Object.keys(require(${JSON.stringify(name)})).sort().join(','))`], { cwd: root });
    const esm = await run(process.execPath, ['--input-type=module', '-e', `console.log(Object.keys(await import(${JSON.stringify(name)})).sort().join(','))`], { cwd: root });
    expect(cjs.stdout.trim().length).toBeGreaterThan(0);
    expect(esm.stdout.trim()).toBe(cjs.stdout.trim());
  });

  it('ships source maps that name no path of the machine it was built on', async () => {
    const maps = (await readdir(join(root, 'dist'), { recursive: true })).filter((file) => file.endsWith('.map'));
    expect(maps.filter((file) => file.endsWith('.cjs.map')).length).toBeGreaterThan(5);
    for (const file of maps) {
      const map = JSON.parse(await readFile(join(root, 'dist', file), 'utf8')) as { file?: string; sources: string[] };
      expect([file, [map.file ?? '', ...map.sources].filter((path) => path.startsWith('/'))]).toEqual([file, []]);
    }
  });

  it('packs the sandbox reference the paywidget sandbox command points to', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, env });
    const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    expect(packed!.files.map((file) => file.path)).toContain('src/sandbox/README.md');
  });

  it('keeps its class names in CommonJS too, where logs and util.inspect show them', async () => {
    // Class fields make esbuild's CommonJS output rename classes (`_class`), which pino would log as the error's type.
    const script = [
      "const { inspect } = require('node:util');",
      "const { PayError, UpstreamError, MemoryLedgerStore, WebhookVerificationError } = require('paywidget-server');",
      'const names = [PayError, UpstreamError, MemoryLedgerStore, WebhookVerificationError].map((c) => c && c.name);',
      "console.log(JSON.stringify({ names, shown: inspect(new PayError('NOT_FOUND', 'x')).split(':')[0] }));",
    ].join('\n');
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual({ names: ['PayError', 'UpstreamError', 'MemoryLedgerStore', 'WebhookVerificationError'], shown: 'PayError' });
  });

  // What a TypeScript project sees: `moduleResolution: node10` (older CommonJS projects) ignores `exports`,
  // so the subpaths' types come from `typesVersions` there.
  it.each([
    ['node10', 'commonjs'],
    ['node16', 'node16'],
    ['bundler', 'esnext'],
  ])('its types resolve for every subpath with moduleResolution %s', async (moduleResolution, module) => {
    const project = await mkdtemp(join(tmpdir(), 'paywidget-types-'));
    try {
      await mkdir(join(project, 'node_modules'));
      await symlink(root, join(project, 'node_modules', 'paywidget-server'), 'dir');
      await writeFile(join(project, 'consumer.ts'), [
        "import { createPay, type Pay } from 'paywidget-server';",
        "import { payMiddleware } from 'paywidget-server/express';",
        "import { createRouteHandlers } from 'paywidget-server/next';",
        "import { payRouter } from 'paywidget-server/koa';",
        "import { startSandbox } from 'paywidget-server/sandbox';",
        "import { signWebhook } from 'paywidget-server/testing';",
        "import { redisStores } from 'paywidget-server/redis';",
        'const pay: Pay = createPay({ env: {} });',
        'export const used = [pay, payMiddleware, createRouteHandlers, payRouter, startSandbox, signWebhook, redisStores];',
        '// @ts-expect-error: a wrong type must be an error, or the imports above resolved to any',
        "export const wrong: number = signWebhook;",
      ].join('\n'));
      const tsc = `${root}node_modules/typescript/bin/tsc`;
      const args = ['consumer.ts', '--noEmit', '--strict', '--skipLibCheck', '--types', 'node', '--typeRoots', `${root}node_modules/@types`, '--moduleResolution', moduleResolution, '--module', module, '--target', 'es2022'];
      const result = await run(process.execPath, [tsc, ...args], { cwd: project }).then(() => '', (error: { stdout: string }) => error.stdout);
      expect(result).toBe('');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it('the paywidget command prints the package version', async () => {
    const { version } = JSON.parse(await readFile(`${root}package.json`, 'utf8')) as { version: string };
    expect((await run(process.execPath, [`${root}dist/cli/index.js`, '--version'])).stdout).toBe(`${version}\n`);
  });

  it('its paywidget command, with REDIS_URL set but no ioredis installed, says to install it', async () => {
    // An installation with every dependency but the optional ioredis.
    const project = await mkdtemp(join(tmpdir(), 'paywidget-no-ioredis-'));
    try {
      const modules = join(project, 'node_modules');
      await mkdir(join(modules, 'paywidget-server'), { recursive: true });
      for (const name of await readdir(join(root, 'node_modules'))) {
        if (name !== 'ioredis' && !name.startsWith('.')) await symlink(join(root, 'node_modules', name), join(modules, name), 'dir');
      }
      // Copied, not linked: Node resolves a module's imports from its real path, which would find this repository's ioredis.
      await cp(join(root, 'dist'), join(modules, 'paywidget-server', 'dist'), { recursive: true });
      await writeFile(join(modules, 'paywidget-server', 'package.json'), await readFile(join(root, 'package.json')));
      const result = await run(process.execPath, [join(modules, 'paywidget-server', 'dist', 'cli', 'index.js'), 'payments', 'prune', '--older-than', '30'], {
        cwd: project, env: { ...env, REDIS_URL: 'redis://127.0.0.1:1' },
      }).then(() => undefined, (error: { code: number; stderr: string }) => error);
      expect(result?.code).toBe(1);
      expect(result?.stderr).toContain('with the ioredis client, which is not installed: npm install ioredis, or unset REDIS_URL');
      expect(result?.stderr).not.toContain('unexpected error');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it('shares one core between its CommonJS entry points: a PayError from the main one is one to the adapters', async () => {
    // A hook throwing the main entry's PayError keeps its code (409) through payMiddleware, not INTERNAL_ERROR.
    const script = `
      const { PayError } = require('paywidget-server');
      const { payMiddleware } = require('paywidget-server/express');
      const express = require('express');
      const app = express();
      app.use('/pay', payMiddleware({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 's' },
        resolveCheckout: () => { throw new PayError('ORDER_NOT_PAYABLE', 'paid already'); } }));
      const server = app.listen(0, '127.0.0.1', async () => {
        const response = await fetch('http://127.0.0.1:' + server.address().port + '/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        console.log(response.status, (await response.json()).error.code);
        server.close();
      });`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: root });
    expect(stdout.trim()).toBe('409 ORDER_NOT_PAYABLE');
  });

  it('takes a PayError from its CommonJS copy as its own in an ESM app that also loads it with require()', async () => {
    // The app imports the package; a dependency of the app require()s it and throws its PayError from a hook.
    const script = `
      import { createRequire } from 'node:module';
      import express from 'express';
      import { PayError, UpstreamError, WebhookVerificationError } from 'paywidget-server';
      import { payMiddleware } from 'paywidget-server/express';
      const { PayError: RequiredPayError, UpstreamError: RequiredUpstreamError, WebhookVerificationError: RequiredVerificationError } = createRequire(process.cwd() + '/')('paywidget-server');
      const thrown = new RequiredPayError('ORDER_NOT_PAYABLE', 'paid already');
      const app = express();
      app.use('/pay', payMiddleware({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 's' },
        resolveCheckout: () => { throw thrown; } }));
      const server = app.listen(0, '127.0.0.1', async () => {
        const response = await fetch('http://127.0.0.1:' + server.address().port + '/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        const upstream = new RequiredUpstreamError('payment', 503, undefined, new Uint8Array());
        const refused = new RequiredVerificationError('WEBHOOK_SIGNATURE_MISMATCH', 'x');
        const subclasses = [upstream instanceof UpstreamError, refused instanceof WebhookVerificationError, refused instanceof UpstreamError, thrown instanceof UpstreamError, new UpstreamError('payment', 500, undefined, new Uint8Array()) instanceof RequiredUpstreamError];
        console.log(JSON.stringify([RequiredPayError !== PayError, thrown instanceof PayError, upstream instanceof PayError, new Error('x') instanceof PayError, null instanceof PayError, response.status, (await response.json()).error.code, subclasses]));
        server.close();
      });`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    expect(JSON.parse(stdout)).toEqual([true, true, true, false, false, 409, 'ORDER_NOT_PAYABLE', [true, true, false, false, true]]);
  });
});

interface ServedApp {
  sandbox: Sandbox;
  /** `http://127.0.0.1:<port>/api/pay` */
  base: string;
  /** What the server printed so far. */
  output(): string;
}

/** Mints a widget token through the served app (expecting 200) and answers what the sandbox's checkout holds for it. */
async function mintAndLookUp(served: ServedApp, body: string): Promise<unknown> {
  const response = await fetch(`${served.base}/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(response.status).toBe(200);
  const { widget_token } = (await response.json()) as { widget_token: string };
  const lookup = await fetch(`${served.sandbox.paymentUrl}/api/v1/checkout/lookup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token }) });
  return lookup.json();
}

/**
 * Around the enclosing describe: a sandbox, then `next build` and `next start` of `app` configured for it. With
 * `webpack`, built with webpack instead of Turbopack, into `.next-webpack` (the app's next.config reads NEXT_DIST_DIR).
 */
function servedApp(app: string, { webpack = false } = {}): ServedApp {
  const served = {} as ServedApp;
  let server: ChildProcess | undefined;
  const appEnv = webpack ? { ...env, NEXT_DIST_DIR: '.next-webpack' } : env;
  beforeAll(async () => {
    served.sandbox = await startSandbox();
    const { sandbox } = served;
    await run(process.execPath, [nextBin, 'build', app, ...(webpack ? ['--webpack'] : [])], { cwd: root, env: appEnv, maxBuffer: 16 * 1024 * 1024 });
    const started = await startOnFreePort(
      (port) => spawn(process.execPath, [nextBin, 'start', app, '-p', String(port), '-H', '127.0.0.1'], {
        cwd: root,
        env: { ...appEnv, PAY_API_URL: sandbox.paymentUrl, PAY_MERCHANT_ID: sandbox.merchantId, PAY_MERCHANT_API_KEY: sandbox.apiKey, PAY_WEBHOOK_SECRET: sandbox.webhookSecret },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      'Ready in',
      60_000,
    );
    server = started.child;
    served.output = started.output;
    served.base = `http://127.0.0.1:${started.port}/api/pay`;
    for (let i = 0; i < 200; i++) {
      if (await fetch(`${served.base}/nope`).then(() => true, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }, 300_000);
  afterAll(async () => {
    server?.kill();
    await served.sandbox?.close();
  });
  return served;
}

describe('examples/next built with next build and served by next start', () => {
  const served = servedApp('examples/next');
  beforeAll(() => served.sandbox.setWebhookUrl(`${served.base}/webhooks`));

  it('mints a token for an order from the merchant’s records', async () => {
    expect(await mintAndLookUp(served, '{"orderId":"1001","amount":1}')).toMatchObject({ order: { order_id: '1001', amount: 1999, currency: 'EUR' } });
  });

  it('passes an upstream refusal through unchanged', async () => {
    served.sandbox.faults.inject({ route: 'POST /api/v1/checkout/init', status: 403, headers: { 'content-type': 'text/plain' }, body: 'merchant suspended' });
    const response = await fetch(`${served.base}/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"1002"}' });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(await response.text()).toBe('merchant suspended');
  });

  it('verifies, deduplicates and refuses webhooks', async () => {
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_n1', order_id: '1003', amount: 12345, currency: 'KWD' } }, secret: served.sandbox.webhookSecret });
    const send = (body: string | Uint8Array) => fetch(`${served.base}/webhooks`, { method: 'POST', headers: signed.headers, body: body as BodyInit });
    expect(await (await send(signed.body)).json()).toEqual({ received: true });
    expect(await (await send(signed.body)).json()).toEqual({ received: true, duplicate: true });
    const forged = await send(String(signed.body).replace('1003', '1001'));
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    const huge = await send(JSON.stringify({ padding: 'x'.repeat(1_100_000) }));
    expect(huge.status).toBe(413);
    expect(served.output()).toContain('fulfil order 1003');
  });

  it('keeps a keep-alive connection usable after refusing a chunked body past the limit', async () => {
    // Chunked, so there is no Content-Length to refuse up front: the body is read until it passes the limit.
    // The rest must still be read off the connection, or the next request on it is never answered.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const send = (method: string, path: string, chunks: Buffer[] = []) =>
        new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
          const request = httpRequest(`${served.base}${path}`, { method, agent, headers: { 'content-type': 'application/json' }, timeout: 4_000 }, (response) => {
            response.resume();
            response.on('end', () => resolve({ status: response.statusCode!, reused: request.reusedSocket }));
          });
          request.on('timeout', () => request.destroy(new Error(`no answer to ${method} ${path} within 4 s`)));
          request.on('error', reject);
          for (const chunk of chunks) request.write(chunk);
          request.end();
        });
      const chunks = Array.from({ length: 20 }, () => Buffer.alloc(64 * 1024, 'x'));
      expect((await send('POST', '/webhooks', chunks)).status).toBe(413);
      expect(await send('GET', '/nope')).toEqual({ status: 404, reused: true });
    } finally {
      agent.destroy();
    }
  });

  it('receives the sandbox’s own webhook for a card payment', async () => {
    const minted = await fetch(`${served.base}/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"1002"}' });
    const { widget_token } = (await minted.json()) as { widget_token: string };
    const checkout = await fetch(`${served.sandbox.paymentUrl}/api/v1/mobile/checkout`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ widget_token, card: { number: served.sandbox.testCards.succeeds, exp_month: 12, exp_year: 2040, cvc: '123' } }),
    });
    const { payment_id } = (await checkout.json()) as { payment_id: string };
    await served.sandbox.webhooks.idle();
    const delivered = served.sandbox.webhooks.delivered.filter((d) => d.paymentId === payment_id);
    expect(delivered.length).toBeGreaterThan(0);
    expect(delivered.every((d) => d.status === 200)).toBe(true);
  });

  it('answers 404 for a path that is not a route, and never shows a secret', async () => {
    const response = await fetch(`${served.base}/nope`);
    expect(response.status).toBe(404);
    expect(served.output()).not.toContain(served.sandbox.apiKey);
    expect(served.output()).not.toContain(served.sandbox.webhookSecret);
  });
});

// The README says the App Router handlers run on the edge runtime: built and served there, they must, with either
// bundler. webpack also type-checks the route's exports as Next 15 does, and follows every import() into the edge
// bundle: the package's `edge-light` build leaves out the Pages Router's Node bridge.
describe.each([
  ['Turbopack', false],
  ['webpack', true],
])('the App Router handlers on the edge runtime (test/fixtures/next-edge), built with %s', (_bundler, webpack) => {
  const served = servedApp('test/fixtures/next-edge', { webpack });

  it('mints through fetch', async () => {
    expect(await mintAndLookUp(served, '{}')).toMatchObject({ order: { order_id: 'edge-1', amount: 1999, currency: 'EUR' } });
  });

  it('verifies with WebCrypto, deduplicates and refuses a forgery', async () => {
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_edge1', order_id: 'edge-1' } }, secret: served.sandbox.webhookSecret });
    const send = (body: string) => fetch(`${served.base}/webhooks`, { method: 'POST', headers: signed.headers, body });
    expect(await (await send(signed.body as string)).json()).toEqual({ received: true });
    expect(await (await send(signed.body as string)).json()).toEqual({ received: true, duplicate: true });
    const forged = await send(String(signed.body).replace('edge-1', 'edge-2'));
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('WEBHOOK_SIGNATURE_MISMATCH');
  });

  it('answers a compressed body it cannot decompress there 415, saying why: never an unexplained 500', async () => {
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_edge_gzip', order_id: 'edge-1' } }, secret: served.sandbox.webhookSecret });
    const response = await fetch(`${served.base}/webhooks`, { method: 'POST', headers: { ...signed.headers, 'content-encoding': 'gzip' }, body: gzipSync(String(signed.body)) });
    // Next's edge runtime has no DecompressionStream (a stand-in that throws); one that gains it verifies the delivery.
    const answer = (await response.json()) as { error?: { code: string; message: string } };
    expect([response.status, answer]).toEqual(response.status === 200 ? [200, { received: true }] : [415, { error: expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringContaining("this runtime cannot decompress (Next.js's edge runtime has no DecompressionStream)") }) }]);
  });

  it('logs the error a hook threw beside the 500 that sends the operator to the log', async () => {
    const response = await fetch(`${served.base}/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"fail":"edge-4711"}' });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CHECKOUT_UNRESOLVED');
    // next start writes its log as it comes: give it a moment.
    for (let i = 0; i < 50 && !served.output().includes('edge-4711'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(served.output()).toContain('orders database unreachable (edge-4711)');
  });
});
