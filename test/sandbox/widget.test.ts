import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { widgetScriptTag } from 'paywidget-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, merchantHeaders, mint, ORDER } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(async () => {
  await sb.close();
});

describe('sandbox widget host', () => {
  it('runs on its own origin and publishes the sha384 of the script bytes it serves', async () => {
    expect(new URL(sb.widgetUrl).origin).not.toBe(new URL(sb.paymentUrl).origin);
    const res = await fetch(`${sb.widgetUrl}/widget/v1/paywidget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*'); // loaded with crossorigin="anonymous"
    const bytes = Buffer.from(await res.arrayBuffer());
    const integrity = `sha384-${createHash('sha384').update(bytes).digest('base64')}`;
    expect(sb.widgetIntegrity).toBe(integrity);
    const published = await call(`${sb.widgetUrl}/widget/v1/integrity.json`);
    expect(published.json).toEqual({ src: `${sb.widgetUrl}/widget/v1/paywidget.js`, integrity });
    expect(published.headers.get('access-control-allow-origin')).toBe('*');
    // The same for every sandbox: the script has nothing per-instance in it.
    const other = await startSandbox();
    expect(other.widgetIntegrity).toBe(integrity);
    await other.close();
    // It fits the merchant helper as it is.
    expect(widgetScriptTag({ widgetHost: sb.widgetUrl, integrity: sb.widgetIntegrity, apiUrl: sb.paymentUrl, env: {} })).toContain(`integrity="${integrity}"`);
    expect(() => widgetScriptTag({ widgetHost: sb.paymentUrl, integrity: sb.widgetIntegrity, apiUrl: sb.paymentUrl, env: {} })).toThrow(/API host/);
  });

  it('serves the frame with a CSP that lets it call the payment API only, and scripts that compile', async () => {
    const frame = await call(`${sb.widgetUrl}/widget/v1/frame.html?origin=http://127.0.0.1:1`);
    expect(frame.status).toBe(200);
    expect(frame.text).toContain(`data-api-url="${sb.paymentUrl}"`);
    expect(frame.text).not.toMatch(/<script>/); // no inline script
    const csp = frame.headers.get('content-security-policy')!;
    expect(csp).toContain(`connect-src ${sb.paymentUrl}`);
    expect(csp).toContain("script-src 'self'");
    for (const file of ['paywidget.js', 'frame-core.js', 'frame.js']) {
      const source = (await call(`${sb.widgetUrl}/widget/v1/${file}`)).text;
      expect(() => new Script(source, { filename: file })).not.toThrow();
    }
    expect((await call(`${sb.widgetUrl}/widget/v1/frame.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await call(`${sb.widgetUrl}/widget/v2/paywidget.js`)).status).toBe(404);
    expect((await call(`${sb.widgetUrl}/widget/v1/paywidget.js`, { method: 'POST', body: {} })).status).toBe(405);
  });

  it('hands the frame widgetPollBudgetMs when set, and refuses one no browser timer can hold', async () => {
    expect((await call(`${sb.widgetUrl}/widget/v1/frame.html?origin=http://127.0.0.1:1`)).text).not.toContain('data-poll-budget-ms');
    const short = await startSandbox({ widgetPollBudgetMs: 2_000 });
    try {
      expect((await call(`${short.widgetUrl}/widget/v1/frame.html?origin=http://127.0.0.1:1`)).text).toContain('data-poll-budget-ms="2000"');
    } finally {
      await short.close();
    }
    for (const bad of [0, -1, 1.5, Infinity, Number.NaN, 2 ** 31]) {
      await expect(startSandbox({ widgetPollBudgetMs: bad })).rejects.toThrow('widgetPollBudgetMs must be a whole number of milliseconds from 1 to 2147483647');
    }
  });
});

describe('sandbox payment API: CORS for the widget origin', () => {
  const preflight = (path: string, origin: string, method = 'POST') =>
    fetch(`${sb.paymentUrl}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type' } });

  it('answers the preflight of the SDK endpoints for the widget origin', async () => {
    for (const [path, method] of [
      ['/api/v1/checkout/lookup', 'POST'], ['/api/v1/mobile/checkout', 'POST'], ['/api/v1/checkout', 'POST'],
      ['/api/v1/payments/pay_x/status', 'GET'], ['/api/v1/saved-payment-methods/pm_x', 'DELETE'], ['/api/v1/payment-methods/pm_x/set-default', 'POST'],
    ] as const) {
      const res = await preflight(path, sb.widgetUrl, method);
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(sb.widgetUrl);
      expect(res.headers.get('access-control-allow-methods')).toContain(method);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    }
  });

  it('never for checkout/init, nor for another origin', async () => {
    const init = await preflight('/api/v1/checkout/init', sb.widgetUrl);
    expect(init.status).toBe(405);
    expect(init.headers.get('access-control-allow-origin')).toBeNull();
    const minted = await call(`${sb.paymentUrl}/api/v1/checkout/init`, { body: ORDER, headers: { ...merchantHeaders(sb), origin: sb.widgetUrl } });
    expect(minted.status).toBe(201);
    expect(minted.headers.get('access-control-allow-origin')).toBeNull();
    const stranger = await preflight('/api/v1/checkout/lookup', 'https://evil.example');
    expect(stranger.headers.get('access-control-allow-origin')).toBeNull();
    expect((await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: 'wt_x' }, headers: { origin: 'https://evil.example' } })).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('on answers and errors (injected faults too), so the frame can read them', async () => {
    const token = await mint(sb);
    const ok = await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: token }, headers: { origin: sb.widgetUrl } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(sb.widgetUrl);
    expect(ok.headers.get('vary')).toBe('Origin');
    const refused = await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: 'wt_unknown' }, headers: { origin: sb.widgetUrl } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(sb.widgetUrl);
    sb.faults.inject({ route: 'POST /api/v1/checkout/lookup', status: 503 });
    const injected = await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: token }, headers: { origin: sb.widgetUrl } });
    expect(injected.status).toBe(503);
    expect(injected.headers.get('access-control-allow-origin')).toBe(sb.widgetUrl);
  });
});
