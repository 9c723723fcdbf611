/** The Express and Koa examples, started with their one documented command, take a whole payment. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFailed } from 'vitest';
import { signWebhook } from 'paywidget-server/testing';
import { eventually } from '../helpers/eventually.js';
import { startOnFreePort } from '../helpers/start-on-free-port.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe.each(['express', 'koa'])('examples/%s with the sandbox', (name) => {
  it('mints through resolveCheckout and fulfils the order when the webhook arrives', async () => {
    const { child, port, output } = await startOnFreePort(
      (port) => spawn(process.execPath, ['--import', 'tsx', 'examples/with-sandbox.ts', name], { cwd: root, env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] }),
      'Merchant backend on',
      30_000,
    );
    onTestFailed(() => console.error(`examples/with-sandbox.ts ${name} printed:\n${output()}`));
    try {
      const paymentUrl = /Sandbox payment service on (\S+);/.exec(output())?.[1];
      const minted = await fetch(`http://127.0.0.1:${port}/pay/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"1003","amount":1}' });
      expect(minted.status).toBe(200);
      const { widget_token } = (await minted.json()) as { widget_token: string };
      const lookup = await fetch(`${paymentUrl}/api/v1/checkout/lookup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ widget_token }) });
      expect(await lookup.json()).toMatchObject({ order: { order_id: '1003', amount: 12345, currency: 'KWD' } });
      await fetch(`${paymentUrl}/api/v1/mobile/checkout`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ widget_token, card: { number: '4242424242424242', exp_month: 12, exp_year: 2040, cvc: '123' } }),
      });
      await eventually(() => output().includes('fulfil order 1003'), 20_000, 'the webhook to be handled');

      // A payment of less than the order owes is acknowledged (so it is not sent again) but not fulfilled.
      const secret = /PAY_WEBHOOK_SECRET=(\S+)/.exec(output())![1]!;
      const short = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_short', order_id: '1001', amount: 1, currency: 'EUR' } }, secret });
      const delivered = await fetch(`http://127.0.0.1:${port}/pay/webhooks`, { method: 'POST', headers: short.headers, body: short.body as string });
      expect(delivered.status).toBe(200);
      await eventually(() => output().includes('for order 1001, which owes 1999 EUR: not fulfilled'), 20_000, 'the short payment to be flagged');
      expect(output()).not.toContain('fulfil order 1001');
      // Nor is the order paid for again while that payment stands confirmed in the ledger: someone looks into it first.
      const again = await fetch(`http://127.0.0.1:${port}/pay/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"1001"}' });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ error: { code: 'ORDER_NOT_PAYABLE', details: { paymentId: 'pay_short' } } });
      const unknown = await fetch(`http://127.0.0.1:${port}/pay/widget-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"404"}' });
      expect(unknown.status).toBe(404);
      // The library takes a trailing slash, and so does the example's authorize hook.
      const slashed = await fetch(`http://127.0.0.1:${port}/pay/widget-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"orderId":"1002"}' });
      expect(slashed.status).toBe(200);

      if (name === 'express') {
        // A body that is not JSON, on the merchant's own routes: a JSON error, no stack trace, no x-powered-by.
        const broken = await fetch(`http://127.0.0.1:${port}/health`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"not json' });
        const text = await broken.text();
        expect([broken.status, broken.headers.get('x-powered-by'), text]).toEqual([400, null, expect.stringMatching(/^\{"error":/)]);
        expect(text).not.toMatch(/node_modules|at .*\.js/);
        // Back from the bank: a page that mounts no widget, so it mints nothing and offers no second payment.
        // What it says follows the shop's record, then the ledger: 1003 paid; 1001's payment confirmed but too
        // small (not 'confirmed' to the shopper); 1002 minted for, nothing heard.
        const said: string[] = [];
        for (const order of ['1003', '1001', '1002']) {
          const back = await fetch(`http://127.0.0.1:${port}/checkout/return?orderId=${order}`);
          const page = await back.text();
          expect([back.status, page.includes('PayWidget')]).toEqual([200, false]);
          said.push(/<p>(.*?)[.;]/.exec(page)![1]!.replace(/<[^>]+>/g, ''));
        }
        expect(said).toEqual(['Your payment for order 1003 is confirmed', 'We are confirming the payment for order 1001 and will e-mail you', 'We have not heard from your bank yet about order 1002']);
      }
    } finally {
      child.kill();
    }
  }, 90_000);
});
