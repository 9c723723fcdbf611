/**
 * The Express example's checkout page in Debian's Chromium (playwright-core, no downloaded browser):
 * the widget from the sandbox's widget host, paying with the test cards, and the merchant backend
 * verifying the webhook of the successful payment. CI installs /usr/bin/chromium (.ci/run).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPay, type Pay, type WebhookEvent } from 'paywidget-server';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import express from 'express';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../examples/express/app.js';
import { checkoutFor, orders } from '../../examples/shared/orders.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../../test-results/checkout-success.png', import.meta.url));
const WIDGET = 'iframe[data-pay-widget]';

interface HostMessage { type: string; origin: string; keys: string[] }

let sandbox: Sandbox;
let pay: Pay;
let server: Server;
let appUrl: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const verified: WebhookEvent[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH).`);
  // A card payment's outcome, unknown after 4 s: the needsReconciliation path without waiting half a minute.
  sandbox = await startSandbox({ widgetPollBudgetMs: 4_000 });
  pay = createPay({
    payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    resolveCheckout: ({ body }) => checkoutFor(body, pay.payments),
  });
  pay.webhooks.on('payment.succeeded', (event) => void verified.push(event));
  // The page's script tag uses the integrity the sandbox publishes.
  const published = (await (await fetch(`${sandbox.widgetUrl}/widget/v1/integrity.json`)).json()) as { integrity: string };
  // The example under a strict Content-Security-Policy with a nonce per response, set as helmet's guide does:
  // every test then also shows that the page and the widget loader run without 'unsafe-inline'.
  const app = express();
  app.use((_req, res, next) => {
    const nonce = randomBytes(16).toString('base64');
    res.locals.cspNonce = nonce;
    // ?frames=none: a policy that forgot frame-src for the widget host.
    const frames = _req.query.frames === 'none' ? "; frame-src 'none'" : '';
    res.set('content-security-policy', `script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; object-src 'none'; base-uri 'none'${frames}`);
    next();
  });
  app.use(createApp(pay, { widget: { widgetHost: sandbox.widgetUrl, integrity: published.integrity, apiUrl: sandbox.paymentUrl } }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox.setWebhookUrl(`${appUrl}/pay/webhooks`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await sandbox?.close();
});

beforeEach(async () => {
  context = await browser.newContext();
  // What the host page itself hears from the widget (the document: messages go to the host page).
  await context.addInitScript(() => {
    const blocked: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = blocked;
    document.addEventListener('securitypolicyviolation', (event) => blocked.push(`${event.effectiveDirective} ${event.blockedURI}`));
    const seen: HostMessage[] = [];
    (window as unknown as { payMessages: HostMessage[] }).payMessages = seen;
    window.addEventListener('message', (event) => {
      const data = event.data as { source?: string; type?: string } | null;
      if (data?.source === 'pay-widget') seen.push({ type: String(data.type), origin: event.origin, keys: Object.keys(data) });
    });
  });
  page = await context.newPage();
  page.setDefaultTimeout(10_000);
});

afterEach(async () => {
  await context.close();
});

async function openCheckout(query: string) {
  await page.goto(`${appUrl}/checkout?${query}`);
  const frame = page.frameLocator(WIDGET);
  await frame.getByLabel('Card number').waitFor();
  return frame;
}

async function payWithCard(frame: ReturnType<Page['frameLocator']>, number: string) {
  await frame.getByLabel('Card number').fill(number);
  await frame.getByLabel('Expiry (MM/YY)').fill('12/34');
  await frame.getByLabel('Security code').fill('123');
  await frame.locator('form.card-form').getByRole('button').click();
}

let copies = 0;
/**
 * A new order shaped like one of the example's: each test pays its own, since the ledger refuses a second
 * payment for an order it knows a payment of (the example's records are shared by the whole file).
 */
function freshOrder(like: '1001' | '1002' | '1003'): string {
  const id = `${like}-${++copies}`;
  orders.set(id, { ...orders.get(like)!, id, status: 'awaiting_payment' });
  return id;
}

const outcome = (state: string) => page.locator(`#outcome[data-state="${state}"]`);
const cspViolations = () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
const hostMessages = () => page.evaluate(() => (window as unknown as { payMessages: HostMessage[] }).payMessages);

describe('checkout page with the sandbox widget, in Chromium', () => {
  it('runs under a strict Content-Security-Policy: its inline elements carry the nonce of their own response, nothing is blocked', async () => {
    const order = freshOrder('1001');
    const [first, second] = await Promise.all([fetch(`${appUrl}/checkout?orderId=${order}`), fetch(`${appUrl}/checkout?orderId=${order}`)]);
    const nonceOf = (response: Response) => /'nonce-([^']+)'/.exec(response.headers.get('content-security-policy') ?? '')?.[1];
    expect(nonceOf(first)).toBeTruthy();
    expect(nonceOf(second)).not.toBe(nonceOf(first));
    const tags = (await first.text()).match(/<(script|style)\b[^>]*>/g) ?? [];
    expect(tags).toHaveLength(3); // the widget's script tag, the page's style and its script
    for (const tag of tags) expect(tag).toContain(`nonce="${nonceOf(first)}"`);

    // The widget mounts only if the page's own script ran.
    await openCheckout(`orderId=${order}`);
    await expect(cspViolations()).resolves.toEqual([]);
  });

  it('says so, and mints nothing, when the widget script does not load (a network error, an integrity that no longer matches)', async () => {
    await page.route('**/widget/v1/paywidget.js', (route) => route.abort());
    const mints: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/pay/widget-token')) mints.push(request.url());
    });
    await page.goto(`${appUrl}/checkout?orderId=${freshOrder('1001')}`);
    await outcome('error').waitFor();
    expect(await page.locator('#outcome').textContent()).toContain('The payment widget could not be loaded');
    expect(await page.locator('#retry').isVisible()).toBe(true);
    expect(mints).toEqual([]);
  });

  it('shows the page while the widget host hangs, and after 10 s says the widget could not be loaded', async () => {
    await page.route('**/widget/v1/paywidget.js', () => {}); // never answered
    await page.goto(`${appUrl}/checkout?orderId=${freshOrder('1001')}`, { waitUntil: 'domcontentloaded' });
    // Not blank: the page is there, saying what it waits for (a parser-blocking script would hold it all back).
    await expect(page.locator('h1').textContent()).resolves.toBe('Checkout');
    await expect(outcome('loading').textContent()).resolves.toBe('Loading the payment form…');
    await outcome('error').waitFor({ timeout: 15_000 });
    expect(await page.locator('#outcome').textContent()).toContain('The payment widget could not be loaded');
  }, 30_000);

  it('reports a payment it saw succeed, so with its webhook late a reload or the back button offers no second payment', async () => {
    sandbox.setWebhookUrl(undefined); // the backend is not told by webhook, for now
    try {
      const order = freshOrder('1001');
      const frame = await openCheckout(`orderId=${order}`);
      await payWithCard(frame, sandbox.testCards.succeeds);
      await outcome('succeeded').waitFor();
      const paymentId = await outcome('succeeded').getAttribute('data-payment-id');
      await expect.poll(async () => (await pay.payments.byOrder(order)).map((entry) => `${entry.paymentId}:${entry.outcome}`), { timeout: 10_000 }).toEqual([`${paymentId}:confirmed`]);
      await page.reload();
      await outcome('error').waitFor();
      await expect(outcome('error').textContent()).resolves.toBe(`Order ${order} is paid, or has a payment that may still be confirmed: please do not pay again.`);
      expect(await page.locator(WIDGET).count()).toBe(0);
    } finally {
      sandbox.setWebhookUrl(`${appUrl}/pay/webhooks`);
    }
  }, 45_000);

  it('says so and offers a retry when the widget frame never speaks (a policy without frame-src for its host)', async () => {
    const order = freshOrder('1001');
    await page.goto(`${appUrl}/checkout?orderId=${order}&frames=none`);
    await outcome('error').waitFor({ timeout: 15_000 });
    await expect(outcome('error').textContent()).resolves.toBe('The payment form could not be shown. Please try again in a moment.');
    expect(await page.locator('#retry').isVisible()).toBe(true);
    expect(await page.locator(WIDGET).count()).toBe(0);
  }, 30_000);

  it('reports needsReconciliation within its budget when the status call hangs, and offers no retry', async () => {
    // The card payment stays processing, so the widget polls; and every status call hangs.
    sandbox.payments.setConfirmDelay(Infinity);
    const hang = sandbox.faults.inject({ route: 'GET /api/v1/payments/:id/status', hang: true, times: Infinity });
    try {
      const order = freshOrder('1001');
      const frame = await openCheckout(`orderId=${order}`);
      await payWithCard(frame, sandbox.testCards.succeeds);
      await outcome('pending').waitFor({ timeout: 15_000 });
      await expect(outcome('pending').textContent()).resolves.toContain('We could not confirm your payment yet');
      expect(await page.locator('#retry').isVisible()).toBe(false);
    } finally {
      sandbox.faults.remove(hang);
      sandbox.payments.setConfirmDelay(0);
    }
  }, 30_000);

  it('shows the amount with the currency\'s ISO 4217 digits, where Intl counts others (HUF 2, not 0; IQD 3, not 0)', async () => {
    for (const [total, currency, shown] of [['1000', 'HUF', '1,000.00'], ['25.000', 'IQD', '25.000']] as const) {
      const id = `fmt-${currency}-${++copies}`;
      orders.set(id, { id, total, currency, status: 'awaiting_payment' });
      const frame = await openCheckout(`orderId=${id}`);
      const label = await frame.locator('form.card-form').getByRole('button').textContent();
      expect(label).toContain(shown);
      expect(label).not.toMatch(/100,000|25,000/);
    }
  });

  it('pays with the succeeding card: success screen, continue to shop, webhook verified by the backend', async () => {
    const order = freshOrder('1001');
    const frame = await openCheckout(`orderId=${order}`);
    await expect(frame.locator('form.card-form').getByRole('button').textContent()).resolves.toContain('19.99');
    // The frame reports its height and the loader sizes the iframe to it.
    await page.waitForFunction((selector) => {
      const resize = (window as unknown as { payMessages: HostMessage[] }).payMessages.some((m) => m.type === 'widget:resize');
      return resize && document.querySelector(selector)!.getBoundingClientRect().height !== 360;
    }, WIDGET);

    await payWithCard(frame, sandbox.testCards.succeeds);
    await frame.getByRole('heading', { name: 'Payment successful' }).waitFor();
    await outcome('succeeded').waitFor();
    const paymentId = await outcome('succeeded').getAttribute('data-payment-id');
    expect(paymentId).toMatch(/^pay_/);
    expect(sandbox.payments.get(paymentId!)?.status).toBe('succeeded');
    expect(await page.locator(WIDGET).count()).toBe(1); // the widget stays visible after success
    await mkdir(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await frame.getByRole('button', { name: 'Continue to shop' }).click();
    await page.locator(WIDGET).waitFor({ state: 'detached' });
    await expect(outcome('done').textContent()).resolves.toBe(`Thank you! Your payment for order ${order} is confirmed.`);

    const messages = await hostMessages();
    expect(messages.map((m) => m.type).filter((t) => t !== 'widget:resize')).toEqual(['widget:ready', 'widget:success', 'widget:continue-to-shop']);
    expect(new Set(messages.map((m) => m.origin))).toEqual(new Set([sandbox.widgetUrl]));
    expect(messages.flatMap((m) => m.keys)).not.toContain('widgetToken');

    await expect.poll(() => verified.map((e) => (e.payload as { data: { payment_id: string } }).data.payment_id), { timeout: 5000 }).toContain(paymentId);
    await sandbox.webhooks.idle();
    expect(sandbox.webhooks.delivered.find((d) => d.paymentId === paymentId)).toMatchObject({ ok: true, status: 200, type: 'payment.succeeded' });
  });

  it('shows the decline message on the page and removes the widget', async () => {
    const frame = await openCheckout(`orderId=${freshOrder('1002')}`);
    await payWithCard(frame, sandbox.testCards.declines);
    await expect(outcome('failed').textContent()).resolves.toBe('Your card was declined. Try another card.');
    await page.locator(WIDGET).waitFor({ state: 'detached' });
    expect(await page.locator('#retry').isVisible()).toBe(true);
    expect((await hostMessages()).map((m) => m.type)).toContain('widget:failure');
  });

  it('cancels: the page shows it and the widget is gone', async () => {
    const frame = await openCheckout(`orderId=${freshOrder('1003')}`);
    await frame.getByRole('button', { name: 'Cancel' }).click();
    await expect(outcome('cancelled').textContent()).resolves.toBe('Checkout cancelled.');
    expect(await page.locator(WIDGET).count()).toBe(0);
    // mount: null without a container; unmount removes the frame.
    const api = await page.evaluate(() => {
      const { PayWidget } = window as unknown as { PayWidget: { mount(c: unknown, o: object): { unmount(): void } | null } };
      const missing = PayWidget.mount('#no-such-container', { widgetToken: 'wt_x' });
      const mounted = PayWidget.mount(document.body, { widgetToken: 'wt_x' });
      const framed = document.querySelectorAll('iframe[data-pay-widget]').length;
      mounted?.unmount();
      return { missing, framed, left: document.querySelectorAll('iframe[data-pay-widget]').length };
    });
    expect(api).toEqual({ missing: null, framed: 1, left: 0 });
  });

  it('passes a 3DS challenge shown inside the widget', async () => {
    const frame = await openCheckout(`orderId=${freshOrder('1002')}`);
    await payWithCard(frame, sandbox.testCards.requires3ds);
    await frame.frameLocator('iframe.challenge-frame').getByRole('button', { name: 'Pass' }).click();
    await frame.getByRole('heading', { name: 'Payment successful' }).waitFor();
    await outcome('succeeded').waitFor();
  });

  it('pays with a saved card of a known shopper, and with pay by bank approved in the bank window', async () => {
    const saved = await openCheckout(`orderId=${freshOrder('1003')}&email=${encodeURIComponent(sandbox.testShopper.email)}`);
    await saved.getByRole('button', { name: /Pay with Mastercard/ }).click();
    await saved.getByRole('heading', { name: 'Payment successful' }).waitFor();

    const bank = await openCheckout(`orderId=${freshOrder('1001')}`);
    const popup = page.waitForEvent('popup');
    await bank.getByRole('button', { name: 'Pay by bank' }).click();
    const bankPage = await popup;
    await bankPage.getByRole('button', { name: 'Approve' }).click();
    await bank.getByRole('heading', { name: 'Payment successful' }).waitFor();
    await outcome('succeeded').waitFor();
  });

  it('pay by bank abandoned (bank window closed, still pending): needsReconciliation, no retry offered', async () => {
    const order = freshOrder('1002');
    const frame = await openCheckout(`orderId=${order}`);
    const popup = page.waitForEvent('popup');
    await frame.getByRole('button', { name: 'Pay by bank' }).click();
    const bankPage = await popup;
    await bankPage.getByRole('button', { name: 'Approve' }).waitFor();
    await bankPage.close();
    await outcome('pending').waitFor({ timeout: 15_000 });
    await expect(outcome('pending').textContent()).resolves.toContain('We could not confirm your payment yet');
    expect(await page.locator('#retry').isVisible()).toBe(false);
    const paymentId = await outcome('pending').getAttribute('data-payment-id');
    expect(sandbox.payments.get(paymentId!)?.status).toBe('pending'); // it may still be approved later

    // The page reported the payment, so the ledger knows of it: a reload must not let the shopper pay twice.
    await page.locator('#outcome[data-reconciled="needs_reconciliation"]').waitFor({ timeout: 20_000 });
    expect(await pay.payments.byOrder(order)).toMatchObject([{ paymentId, outcome: 'unresolved' }]);
    // Back from the bank meanwhile, the return page says what the ledger knows: under way, no second payment.
    const back = await (await fetch(`${appUrl}/checkout/return?orderId=${order}`)).text();
    expect(back).toContain('We are confirming the payment for order');
    expect(back).toContain('there is no need to pay again');
    await page.reload();
    await outcome('error').waitFor();
    await expect(outcome('error').textContent()).resolves.toBe(`Order ${order} is paid, or has a payment that may still be confirmed: please do not pay again.`);
    expect(await page.locator('#retry').isVisible()).toBe(false);
    expect(await page.locator(WIDGET).count()).toBe(0);
  }, 45_000);
});
