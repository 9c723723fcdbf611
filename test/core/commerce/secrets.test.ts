import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { createPay, PayError } from 'paywidget-server';
import { captureLogger } from '../../helpers/capture-logger.js';
import { startLocalServer } from '../../helpers/local-server.js';
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

describe('commerce secrets echoed back in a refusal (a gateway or WAF that quotes the request)', () => {
  const PASSWORD = 'hunter2/S3cret!';
  const TOKEN = 'tok0123456789abcdefSECRET';

  it('redacts the admin password from a refused login and the Bearer token from a refused read, in every rendering and the log', async () => {
    let refuseLogin = true;
    const gateway = await startLocalServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      req.on('end', () => {
        const json = { 'content-type': 'application/json' };
        if (req.url!.endsWith('/V1/integration/admin/token')) {
          if (!refuseLogin) return res.writeHead(200, json).end(JSON.stringify(TOKEN));
          return res.writeHead(400, json).end(JSON.stringify({ message: 'Invalid request body: %1', parameters: [raw] }).replaceAll('/', '\\/'));
        }
        res.writeHead(400, json).end(JSON.stringify({ message: 'Rejected header: %1', parameters: [String(req.headers.authorization)] }));
      });
    });
    try {
      const logger = captureLogger();
      const pay = createPay({ env: {}, commerce: { url: gateway.base, username: 'admin', password: PASSWORD }, logger });
      const login = await pay.orders.get(1).then(() => undefined, (e: unknown) => e);
      expect(login).toBeInstanceOf(PayError);
      expect((login as Error).message).toContain('refused the admin token request with HTTP 400: Invalid request body: {"username":"admin","password":"[redacted]"}');
      refuseLogin = false;
      const read = await pay.orders.get(1).then(() => undefined, (e: unknown) => e);
      expect((read as Error).message).toContain('refused the read of order 1 with HTTP 400: Rejected header: Bearer [redacted]');

      const texts = [...renderings(login), ...renderings(read), logger.text()];
      for (const secret of [PASSWORD, PASSWORD.replaceAll('/', '\\/'), TOKEN]) {
        for (const text of texts) expect(text).not.toContain(secret);
      }
    } finally {
      await gateway.close();
    }
  });

  it('redacts a password past ASCII from a refusal that quotes it as PHP writes JSON (\\u00e4), or with any other escape', async () => {
    const password = 'Geheimnis_ä/Pw9';
    // PHP's json_encode: '/' as '\\/' and 'ä' as '\\u00e4'; then an encoder that escapes a plain letter ('G' as '\\u0047').
    const php = JSON.stringify(password).slice(1, -1).replaceAll('/', '\\/').replace('ä', '\\u00e4');
    const odd = php.replace('G', '\\u0047');
    let echo = php;
    let status = 401;
    const gateway = await startLocalServer((req, res) => {
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json' }).end(`{"message":"Invalid login: user %1, password %2","parameters":["admin","${echo}"]}`);
    });
    try {
      const logger = captureLogger();
      const refusals: unknown[] = [];
      for (const [body, code] of [[php, 401], [odd, 401], [php, 400], [odd, 400]] as const) {
        echo = body;
        status = code;
        const pay = createPay({ env: {}, commerce: { url: gateway.base, username: 'admin', password }, logger });
        const refused = await pay.orders.get(1).then(() => undefined, (e: unknown) => e);
        expect((refused as Error).message).toContain('password [redacted]');
        refusals.push(refused);
      }
      const texts = [...refusals.flatMap(renderings), logger.text()];
      for (const secret of [password, 'Geheimnis', php]) {
        for (const text of texts) expect(text).not.toContain(secret);
      }
    } finally {
      await gateway.close();
    }
  });
});
