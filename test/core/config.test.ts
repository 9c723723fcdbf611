import { describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { createPay, MemoryCheckpointStore, MemoryClaimStore, MemoryLedgerStore, PayError, silentLogger } from '../../src/index.js';
import { resolveConfig } from '../../src/core/config.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { thrown } from '../helpers/pay-errors.js';

const env = {
  PAY_API_URL: 'https://pay.example.test/',
  PAY_MERCHANT_ID: 'merchant_1',
  PAY_MERCHANT_API_KEY: 'sk_live_topsecret_key',
  PAY_WEBHOOK_SECRET: 'whsec_one,whsec_two',
};

/** A plain object with these methods (each does nothing). */
function methods(...names: string[]): Record<string, () => Promise<undefined>> {
  return Object.fromEntries(names.map((name) => [name, async () => undefined]));
}

const configError = (run: () => unknown) => thrown(run, 'a configuration error');

async function rejection(promise: Promise<unknown>): Promise<PayError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(PayError);
  return error as PayError;
}

describe('configuration', () => {
  it('works from the environment alone', () => {
    const config = resolveConfig({ env });
    expect(config.payment?.apiUrl).toBe('https://pay.example.test');
    expect(config.payment?.merchantId).toBe('merchant_1');
    expect(config.payment?.apiKey.reveal()).toBe('sk_live_topsecret_key');
    expect(config.webhookSecrets.map((s) => s.reveal())).toEqual(['whsec_one', 'whsec_two']);
    expect(config.missing).toEqual([]);
    expect(config.commerce).toBeUndefined();
    expect(config.http.maxRetries).toBe(2);
  });

  it('prefers options over the environment', () => {
    const config = resolveConfig({ env, payment: { merchantId: 'from_options', webhookSecret: ['a', 'b', 'c'] } });
    expect(config.payment?.merchantId).toBe('from_options');
    expect(config.webhookSecrets).toHaveLength(3);
  });

  it.each([
    ['PAY_API_URL', 'payment.apiUrl'],
    ['PAY_MERCHANT_ID', 'payment.merchantId'],
    ['PAY_MERCHANT_API_KEY', 'payment.apiKey'],
  ])('a missing %s is named, option and variable, when minting needs it', async (variable, option) => {
    // createPay itself succeeds: `next build` evaluates route modules without the secrets.
    const pay = createPay({ env: { ...env, [variable]: undefined } });
    const error = await rejection(pay.mintWidgetToken({ amount: 100, currency: 'EUR', orderId: 'o' }));
    expect(error).toBeInstanceOf(PayError);
    expect(error.code).toBe('CONFIG_MISSING');
    expect(error.message).toContain(`${option} (environment variable ${variable})`);
    const response = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{}' });
    expect(response?.status).toBe(500);
  });

  it('a missing PAY_WEBHOOK_SECRET is named when a webhook arrives', async () => {
    const pay = createPay({ env: { ...env, PAY_WEBHOOK_SECRET: undefined } });
    const error = await rejection(pay.webhooks.verify({ rawBody: '{}', headers: { 'x-pay-signature': 'a'.repeat(64), 'x-pay-timestamp': '1', 'x-pay-event-id': 'e' } }));
    expect(error.code).toBe('CONFIG_MISSING');
    expect(error.message).toContain('payment.webhookSecret (environment variable PAY_WEBHOOK_SECRET)');
  });

  it('keeps each base URL in one spelling: scheme and host in lower case, no default port, no trailing slash', () => {
    const pay = createPay({
      env: {},
      payment: { apiUrl: 'HTTPS://Pay.Example:443/Base/', merchantId: 'm', apiKey: 'k', webhookSecret: 'w' },
      commerce: { url: 'HTTP://Shop.Example:80/', username: 'u', password: 'p' },
    });
    expect(pay.config.payment?.apiUrl).toBe('https://pay.example/Base');
    expect(pay.config.commerce?.url).toBe('http://shop.example');
  });

  it('a malformed URL is refused with the option named', () => {
    const error = configError(() => createPay({ env: { ...env, PAY_API_URL: 'ftp://nope' } }));
    expect(error.message).toContain('payment.apiUrl (environment variable PAY_API_URL) must be an http(s) URL');
  });

  it('a number or a choice of the wrong kind is explained in words, not in zod\'s', () => {
    const cases: Array<[object, string]> = [
      [{ http: { attemptTimeoutMs: '5s' } }, 'http.attemptTimeoutMs must be a whole number of milliseconds, such as 5000 (not "5s")'],
      [{ http: { totalTimeoutMs: 0 } }, 'http.totalTimeoutMs must be more than 0 ms'],
      [{ http: { maxRetries: -1 } }, 'http.maxRetries must be a whole number from 0 to 10'],
      [{ http: { maxRetries: 11 } }, 'http.maxRetries must be a whole number from 0 to 10'],
      [{ http: { transport: 'undici' } }, "http.transport must be 'auto' or 'fetch'"],
    ];
    for (const [options, message] of cases) expect(configError(() => createPay({ env, ...options })).message).toContain(message);
    expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: 'https://shop.example.test', COMMERCE_USERNAME: 'u', COMMERCE_PASSWORD: 'p', COMMERCE_READ_METHOD: 'PUT' } })).message)
      .toContain("commerce.readMethod (environment variable COMMERCE_READ_METHOD) must be 'GET' or 'POST'");
  });

  it('a base URL that carries the API path already is refused, naming the base to give', () => {
    // The library adds /api/v1/… and /rest/<scope>/V1/…: such a URL reaches no route, and a 404 page is not "unknown payment".
    for (const apiUrl of ['https://pay.example.test/api/v1', 'https://pay.example.test/api/v1/', 'https://pay.example.test/API/V1/payments']) {
      expect(configError(() => createPay({ env: { ...env, PAY_API_URL: apiUrl } })).message).toContain('PAY_API_URL) must be the payment service\'s base URL, without /api/v1');
    }
    for (const url of ['https://shop.example.test/rest', 'https://shop.example.test/rest/V1', 'https://shop.example.test/shop/rest/default/V1/']) {
      expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: url, COMMERCE_USERNAME: 'u', COMMERCE_PASSWORD: 'p' } })).message).toContain('COMMERCE_URL) must be the store\'s base URL, without /rest');
    }
    // A query or fragment: the paths the library appends would land in it, and every call reach '/'.
    for (const apiUrl of ['https://pay.example.test?version=2', 'https://pay.example.test/?', 'https://pay.example.test#top']) {
      expect(configError(() => createPay({ env: { ...env, PAY_API_URL: apiUrl } })).message).toContain('PAY_API_URL) must not carry a query or fragment');
    }
    expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: 'https://shop.example.test/?store=1', COMMERCE_USERNAME: 'u', COMMERCE_PASSWORD: 'p' } })).message).toContain('COMMERCE_URL) must not carry a query or fragment');
    // A base under a path of its own is fine.
    expect(createPay({ env: { ...env, PAY_API_URL: 'https://example.test/pay', COMMERCE_URL: 'https://example.test/restaurant-shop', COMMERCE_USERNAME: 'u', COMMERCE_PASSWORD: 'p' } }).config.payment?.apiUrl).toBe('https://example.test/pay');
  });

  it('the commerce platform is optional; a part missing is named when orders are first needed, not at createPay', async () => {
    // A build step may see COMMERCE_URL without the password: creating the instance must not fail there.
    const partial = createPay({ env: { ...env, COMMERCE_URL: 'https://shop.example.test' } });
    const error = await partial.orders.get(1).then(() => undefined, (e: unknown) => e as PayError);
    expect(error).toMatchObject({ code: 'CONFIG_MISSING', details: { options: ['commerce.username', 'commerce.password'] } });
    expect(error!.message).toContain('commerce.username (environment variable COMMERCE_USERNAME)');
    expect(error!.message).toContain('commerce.password (environment variable COMMERCE_PASSWORD)');
    expect(error!.message).not.toContain('COMMERCE_URL');
    // Minting from an order answers the same code (its details go to the log, not to the shopper).
    const minted = await partial.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{"order_id":1}' });
    expect(minted!.status).toBe(500);
    expect(JSON.parse(String(minted!.body)).error.code).toBe('CONFIG_MISSING');
    // A value that is there but malformed is still refused at once.
    expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: 'ftp://nope' } })).message).toContain('commerce.url (environment variable COMMERCE_URL) must be');
    // Each URL with an example of its own kind: the store's, not the payment service's.
    expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: 'shop.example.test' } })).message).toMatch(/COMMERCE_URL\) must be an http\(s\) URL such as https:\/\/shop\.example\.com/);
    const config = resolveConfig({ env: { ...env, COMMERCE_URL: 'https://shop.example.test/', COMMERCE_USERNAME: 'admin', COMMERCE_PASSWORD: 'pw-secret' } });
    expect(config.commerce).toMatchObject({ url: 'https://shop.example.test', username: 'admin', scope: 'default', readMethod: 'GET' });
    const scoped = resolveConfig({ env: { ...env, COMMERCE_URL: 'https://shop.example.test/', COMMERCE_USERNAME: 'admin', COMMERCE_PASSWORD: 'pw-secret', COMMERCE_SCOPE: 'fr' } });
    expect(scoped.commerce?.scope).toBe('fr');
  });

  it('takes a variable set to nothing (PAY_API_URL= in a .env file) as not set', async () => {
    const pay = createPay({ env: { ...env, PAY_MERCHANT_API_KEY: '', COMMERCE_URL: '', COMMERCE_SCOPE: '' } });
    const error = await rejection(pay.mintWidgetToken({ amount: 100, currency: 'EUR', orderId: 'o' }));
    expect(error).toMatchObject({ code: 'CONFIG_MISSING', message: expect.stringContaining('payment.apiKey (environment variable PAY_MERCHANT_API_KEY)') });
    expect(pay.config.commerce).toBeUndefined();
  });

  it('http options are validated', () => {
    const error = configError(() => createPay({ env, http: { attemptTimeoutMs: -5 } }));
    expect(error.message).toContain('http.attemptTimeoutMs');
    // Past Node's longest timer, every attempt would time out at once.
    expect(configError(() => createPay({ env, http: { attemptTimeoutMs: 2 ** 31 } })).message).toMatch(/http\.attemptTimeoutMs.*at most 2147483647/);
  });

  it('refuses a merchant id or API key no HTTP header can carry, without echoing it', () => {
    for (const [field, value] of [['apiKey', 'sk_live_do_not_echo\nsecond line'], ['apiKey', 'sk live do_not_echo'], ['merchantId', 'm\u0000do_not_echo'], ['apiKey', 'sk_\u00e9_do_not_echo']] as const) {
      const error = configError(() => createPay({ env, payment: { apiUrl: 'https://p.test', merchantId: 'm', apiKey: 'k', webhookSecret: 'w', [field]: value } }));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(`payment.${field}`);
      expect(error.message).toContain('printable ASCII');
      expect(`${error.message} ${JSON.stringify(error)} ${inspect(error)}`).not.toContain('do_not_echo');
    }
    // Surrounding whitespace (a key read from a file keeps its newline) is trimmed, as before.
    expect(createPay({ env, payment: { apiUrl: 'https://p.test', merchantId: 'm', apiKey: ' sk_ok\n', webhookSecret: 'w' } }).config.payment?.apiKey?.reveal()).toBe('sk_ok');
  });

  it('refuses a service URL without its scheme as CONFIG_INVALID naming the variable, not a TypeError', () => {
    for (const [variable, extra] of [['PAY_API_URL', {}], ['COMMERCE_URL', { COMMERCE_USERNAME: 'a', COMMERCE_PASSWORD: 'p' }]] as const) {
      const error = configError(() => createPay({ env: { ...env, ...extra, [variable]: '127.0.0.1:47200' } }));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toMatch(new RegExp(`environment variable ${variable}\\) must be an http\\(s\\) URL`));
    }
  });

  it('refuses a service URL with a user name or password in it, without echoing them', () => {
    // fetch refuses such a URL with an error quoting it whole; node:http would send the pair as Basic auth.
    for (const [field, options] of [
      ['payment.apiUrl', { payment: { apiUrl: 'https://proxyuser:pw_do_not_echo@pay.test' } }],
      ['commerce.url', { commerce: { url: 'https://admin:pw_do_not_echo@shop.test', username: 'admin', password: 'p' } }],
    ] as const) {
      const error = configError(() => createPay({ env, ...options }));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(`${field}`);
      expect(error.message).toContain('user name or password');
      expect(`${error.message} ${JSON.stringify(error)} ${inspect(error)}`).not.toContain('pw_do_not_echo');
    }
    expect(configError(() => createPay({ env: { ...env, COMMERCE_URL: 'https://admin:pw_do_not_echo@shop.test', COMMERCE_USERNAME: 'a', COMMERCE_PASSWORD: 'p' } })).message).toContain('COMMERCE_URL');
  });

  it("http.transport defaults to 'auto', accepts 'fetch', and refuses anything else naming the option", () => {
    expect(resolveConfig({ env }).http.transport).toBe('auto');
    expect(resolveConfig({ env, http: { transport: 'fetch' } }).http.transport).toBe('fetch');
    expect(createPay({ env, http: { transport: 'fetch' } }).config.http.transport).toBe('fetch');
    const error = configError(() => createPay({ env, http: { transport: 'curl' as 'fetch' } }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('http.transport');
  });

  it('refuses an option it does not know, at the top and in each section, naming it and the known ones', () => {
    const top = configError(() => createPay({ env, webhook: { leaseMs: 5_000 } } as never));
    expect(top.code).toBe('CONFIG_INVALID');
    expect(top.message).toMatch(/unknown option webhook; the createPay options are .*webhooks/);
    expect(top.details).toEqual({ options: ['webhook'] });
    const nested = configError(() => createPay({ env, webhooks: { lease: 5_000 }, http: { retries: 3 } } as never));
    expect(nested.message).toMatch(/unknown option http\.retries, webhooks\.lease;/);
    expect(nested.message).toContain('the webhooks options are toleranceSeconds, maxBodyBytes, retentionMs, leaseMs, eventType');
    // Never echoes a value: a misplaced key may hold a secret.
    const misplaced = configError(() => createPay({ env, payment: { secret: 'whsec_do_not_echo' } } as never));
    expect(misplaced.message).toContain('payment.secret');
    expect(`${misplaced.message} ${JSON.stringify(misplaced)} ${inspect(misplaced)}`).not.toContain('whsec_do_not_echo');
    // A misspelt store would leave the in-memory one in force without a word.
    expect(configError(() => createPay({ env, stores: { checkpoint: new MemoryCheckpointStore() } } as never)).details).toEqual({ options: ['stores.checkpoint'] });
    // Every documented option passes.
    expect(() => createPay({
      env, maxBodyBytes: 10_000, now: Date.now, logger: console, authorize: () => true, resolveCheckout: () => ({ amount: 1, currency: 'EUR', orderId: 'o' }),
      payment: { apiUrl: 'https://p.test', merchantId: 'm', apiKey: 'k', webhookSecret: 'w' },
      commerce: { url: 'https://c.test', username: 'u', password: 'p', scope: 'default', readMethod: 'GET', tokenLifetimeMs: 60_000 },
      http: { attemptTimeoutMs: 1, totalTimeoutMs: 1, maxRetries: 0, backoffBaseMs: 1, backoffMaxMs: 1, retryAfterMaxMs: 0, transport: 'auto' },
      webhooks: { toleranceSeconds: 300, maxBodyBytes: 1_000, retentionMs: 1_000_000, leaseMs: 1_000, eventType: () => 'x' },
      payments: { terminalStatuses: {}, statusAuth: 'merchant', pollBudgetMs: 100, pollIntervalMs: 10, pollMaxIntervalMs: 50, extractPayment: () => undefined },
      stores: {},
    })).not.toThrow();
  });

  it('refuses hooks, a logger or stores of the wrong kind at createPay, naming each option and what it needs', () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['authorize', { authorize: true }, /authorize must be a function \(request\) => true \| false .*got a boolean/],
      ['resolveCheckout', { resolveCheckout: {} }, /resolveCheckout must be a function \(request\) => \(\{ amount, currency, orderId \}\).*got an object/],
      ['now', { now: 1_700_000_000_000 }, /now must be a function answering the time in milliseconds, such as Date\.now, got a number/],
      ['logger', { logger: {} }, /logger must be a pino-compatible logger with debug, info, warn and error functions \(it has no debug, info, warn, error functions\)/],
      ['logger', { logger: { ...console, warn: undefined } }, /logger .*\(it has no warn function\); pass a pino logger, console, or silentLogger/],
      ['stores.claims', { stores: { claims: { claim() {}, complete() {}, release() {} } } }, /stores\.claims must be a ClaimStore, with the methods claim, complete, release, bind: it has no bind function/],
      ['stores.claims', { stores: { claims: { ...methods('claim', 'complete', 'release', 'bind'), renew: true } } }, /stores\.claims has renew that is not a function/],
      ['stores.ledger', { stores: { ledger: methods('get', 'list', 'byOrder', 'forget') } }, /stores\.ledger must be a LedgerStore, .*: it has no record function/],
      ['stores.checkpoints', { stores: { checkpoints: methods('get', 'set', 'acquireLock') } }, /stores\.checkpoints has acquireLock but no renewLock, releaseLock: give all of acquireLock, renewLock, releaseLock or none/],
      ['stores.adminTokens', { stores: { adminTokens: 'redis://cache:6379' } }, /stores\.adminTokens must be an AdminTokenStore .*got a string/],
      ['stores', { stores: [] }, /stores must be an object, got an array/],
    ];
    for (const [option, options, message] of cases) {
      const error = configError(() => createPay({ env, ...options } as never));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toMatch(/^paywidget-server configuration: /);
      expect(error.message).toMatch(message);
      expect(error.details).toEqual({ options: [option] });
    }
    // Every problem at once, and never a value (it may be a secret).
    const all = configError(() => createPay({ env, authorize: 'sk_do_not_echo', logger: null, stores: { ledger: {} } } as never));
    expect(all.details).toEqual({ options: ['authorize', 'logger', 'stores.ledger'] });
    expect(all.message).not.toContain('sk_do_not_echo');
    // What the interfaces make optional stays optional; class instances (methods on the prototype) and console pass.
    expect(() => createPay({
      env,
      logger: console,
      stores: {
        claims: new MemoryClaimStore(),
        ledger: new MemoryLedgerStore(),
        checkpoints: methods('get', 'set') as never,
        adminTokens: { ...methods('get', 'set'), acquireRefreshLock: async () => undefined } as never,
      },
    })).not.toThrow();
    expect(() => createPay({ env, logger: silentLogger, stores: { claims: methods('claim', 'complete', 'release', 'bind') as never, checkpoints: new MemoryCheckpointStore() } })).not.toThrow();
  });

  it('refuses createPay(null) or a non-object as CONFIG_INVALID saying how to call it, not "Cannot convert undefined or null to object"', () => {
    for (const [value, kind] of [[null, 'null'], ['/pay', 'a string'], [[], 'an array']] as const) {
      const error = configError(() => createPay(value as never));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain(`createPay takes an options object, got ${kind}. Call createPay({ ... }), or createPay() to read every setting from the environment.`);
    }
  });

  it("http.transport 'fetch' works end to end: an order read from the commerce sandbox", async () => {
    const sb = await startSandbox({ commerce: { orders: 20 } });
    try {
      const pay = createPay({ env: {}, http: { transport: 'fetch' }, commerce: { url: sb.commerceUrl, username: sb.commerceUsername, password: sb.commercePassword } });
      expect(await pay.orders.get(7)).toEqual(sb.commerce.order(7));
    } finally {
      await sb.close();
    }
  });

  it('a malformed secret is named without echoing its value', () => {
    const error = configError(() => createPay({ env, payment: { apiKey: '   ' } }));
    expect(error.message).toContain('payment.apiKey (environment variable PAY_MERCHANT_API_KEY) must not be empty');
  });

  it('no secret shows in JSON.stringify, util.inspect or String() of the configuration', () => {
    const secrets = ['sk_live_topsecret_key', 'whsec_one', 'whsec_two', 'pw-secret'];
    const pay = createPay({ env: { ...env, COMMERCE_URL: 'https://shop.example.test', COMMERCE_USERNAME: 'admin', COMMERCE_PASSWORD: 'pw-secret' } });
    const renderings = [JSON.stringify(pay.config), inspect(pay.config, { depth: 10 }), inspect(pay, { depth: 10, showHidden: true }), String(pay.config.payment?.apiKey), `${pay.config.commerce?.password}`];
    for (const text of renderings) for (const secret of secrets) expect(text).not.toContain(secret);
    expect(JSON.stringify(pay.config)).toContain('[redacted]');
  });
});
