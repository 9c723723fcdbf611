import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { collect, commerceSandbox, payFor } from './helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await commerceSandbox({ orders: 120 });
});
afterAll(() => sb.close());

/** Every way a value could leak: message, stack, JSON of the error and of its cause, util.inspect. */
function renderings(value: unknown): string[] {
  const error = value as Error & { cause?: unknown };
  return [String(error?.message), String(error?.stack), JSON.stringify(value), inspect(value, { depth: 10 }), JSON.stringify(error?.cause ?? null), inspect(error?.cause, { depth: 10 })];
}

describe('commerce secrets', () => {
  it('never show the admin password or token in errors, logs, JSON or inspect', async () => {
    const logger = captureLogger();
    const pay = payFor(sb, { logger });
    const outcomes: unknown[] = [];
    const record = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => outcomes.push(e));

    await pay.orders.get(1);
    sb.commerce.expireTokens();
    await pay.orders.get(2); // refresh after a 401
    await record(pay.orders.get(999_999));
    const total = sb.commerce.order(3)!.grand_total;
    sb.commerce.setOrder(3, { grand_total: 'x' });
    await record(pay.orders.get(3));
    sb.commerce.setOrder(3, { grand_total: total });
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 500, times: 6 });
    await record(pay.orders.search({ status: 'pending' }));
    await record(collect(pay.orders.iterate({ pageSize: 50 })));
    await pay.orders.sync({ checkpoint: 'c', onOrder: () => {} });
    await record(payFor(sb, { logger, commerce: { password: `${sb.commercePassword}-wrong` } }).orders.get(1));
    sb.commerce.setTwoFactor(true);
    sb.commerce.expireTokens();
    await record(payFor(sb, { logger }).orders.get(1));
    sb.commerce.setTwoFactor(false);
    await record(pay.handle({ method: 'POST', path: '/widget-token', headers: {}, rawBody: JSON.stringify({ order_id: 5 }) }).then((r) => { throw r; }));

    const tokens = sb.commerce.issuedTokens();
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    expect(outcomes.length).toBe(7);
    const texts = [...outcomes.flatMap(renderings), logger.text(), inspect(pay, { depth: 10 }), JSON.stringify(pay), inspect(pay.orders, { depth: 10 }), inspect(pay.config, { depth: 10 }), JSON.stringify(pay.config), inspect(sb), JSON.stringify(sb)];
    for (const secret of [sb.commercePassword, `${sb.commercePassword}-wrong`, ...tokens]) {
      for (const text of texts) expect(text).not.toContain(secret);
    }
    expect(logger.lines.length).toBeGreaterThan(3);
  });
});
