import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAdminTokenStore } from 'paywidget-server';
import { eventually } from '../../helpers/eventually.js';
import type { Sandbox } from 'paywidget-server/sandbox';
import { AdminTokens } from '../../../src/core/commerce/token.js';
import { resolveCommerceConfig } from '../../../src/core/config.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { collect, commerceSandbox, payFor, rejection } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('admin token', () => {
  it('logs in with the password exactly as given in code, spaces included; from the environment, one trailing line break dropped', async () => {
    sb = await commerceSandbox({ orders: 3 });
    sb.commerce.setPassword(' Corr3ct horse ');
    expect((await payFor(sb, { commerce: { password: ' Corr3ct horse ' } }).orders.get(1)).entity_id).toBe(1);
    sb.commerce.setPassword('from-a-file');
    // A line break of any kind: LF, CRLF, or the CR a CRLF env file read line by line leaves (docker --env-file).
    for (const lineBreak of ['\n', '\r\n', '\r']) {
      const fromFile = payFor(sb, { env: { COMMERCE_PASSWORD: `from-a-file${lineBreak}` }, commerce: { password: undefined } });
      expect((await fromFile.orders.get(2)).entity_id).toBe(2);
    }
    // Only whitespace is no password.
    expect(() => payFor(sb!, { commerce: { password: '   ' } })).toThrow(/commerce\.password .*must not be only whitespace/);
  });

  it('is fetched once and reused, with Bearer auth on every order call', async () => {
    sb = await commerceSandbox({ orders: 10 });
    const pay = payFor(sb);
    for (const id of [1, 2, 3]) expect((await pay.orders.get(id)).entity_id).toBe(id);
    await pay.orders.search({ pageSize: 2 });
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, tokensIssued: 1, orderReads: 3, searches: 1, unauthorized: 0 });
  });

  it('is refreshed by one request however many calls wait for it', async () => {
    sb = await commerceSandbox({ orders: 30 });
    const pay = payFor(sb);
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 50 });
    const orders = await Promise.all(Array.from({ length: 20 }, (_, i) => pay.orders.get(i + 1)));
    expect(orders.map((o) => o.entity_id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(sb.commerce.stats().tokenRequests).toBe(1);

    // All of them meet the expired token: still one refresh.
    sb.commerce.expireTokens();
    sb.commerce.resetStats();
    await Promise.all(Array.from({ length: 20 }, (_, i) => pay.orders.get(i + 1)));
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, unauthorized: 20 });
  });

  it('on a 401 from an order call is refreshed once and the call retried once', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb);
    await pay.orders.get(1);
    sb.commerce.expireTokens();
    expect((await pay.orders.get(2)).entity_id).toBe(2);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, unauthorized: 1 });
  });

  it('gives up with COMMERCE_AUTH_FAILED when the fresh token is refused too', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 401, times: 2, body: JSON.stringify({ message: "The consumer isn't authorized to access %resources.", parameters: { resources: 'Magento_Sales::actions_view' } }) });
    const error = await rejection(pay.orders.get(1));
    expect(error.code).toBe('COMMERCE_AUTH_FAILED');
    expect(error.message).toContain("The consumer isn't authorized to access Magento_Sales::actions_view");
    expect(sb.commerce.stats().tokenRequests).toBe(2); // the first login, and the one refresh
  });

  it('is refreshed before it expires (lifetime less a margin), by the injected clock', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5 }, () => clock);
    const pay = payFor(sb, { now: () => clock });
    await pay.orders.get(1);
    clock += 3 * 3_600_000 + 57 * 60_000; // 3 h 57: the 4 h token is still valid, but inside the 5-minute margin
    await pay.orders.get(2);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, unauthorized: 0 });
  });

  it('follows a configured lifetime', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5, tokenLifetimeMs: 3_600_000 }, () => clock);
    const pay = payFor(sb, { now: () => clock, commerce: { tokenLifetimeMs: 3_600_000 } });
    await pay.orders.get(1);
    clock += 30 * 60_000;
    await pay.orders.get(1);
    clock += 28 * 60_000; // 58 minutes: inside the margin
    await pay.orders.get(1);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, unauthorized: 0 });
  });

  it('is never retried after the platform refuses the login', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const logger = captureLogger();
    const pay = payFor(sb, { commerce: { password: 'wrong-password' }, logger });
    const error = await rejection(pay.orders.get(1));
    expect(error.code).toBe('COMMERCE_AUTH_FAILED');
    expect(error.status).toBe(502);
    expect(error.message).toContain('The account sign-in was incorrect');
    // Which shop and which user: a host with an instance per shop, and one logger, tells them apart.
    expect(error.message).toContain(`The commerce platform at ${sb.commerceUrl} refused the admin login of '${sb.commerceUsername}'`);
    expect(logger.lines.map((line) => JSON.parse(line) as unknown)).toContainEqual(expect.objectContaining({ level: 'error', url: sb.commerceUrl, username: sb.commerceUsername }));
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('is logged once when a mint by order id needs the login the platform refuses, not again by the route', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const logger = captureLogger();
    // authorizeOrder set: left out, the first mint by order id warns about it, which is not what this test counts.
    const pay = payFor(sb, { commerce: { password: 'wrong-password' }, logger, authorizeOrder: () => true });
    const response = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{"order_id":1}' });
    expect(response?.status).toBe(502);
    const said = logger.lines.map((line) => JSON.parse(line) as { level: string; msg: string }).filter((line) => line.level === 'error' || line.level === 'warn');
    expect(said.map((line) => line.msg)).toEqual(['commerce platform refused the admin token request']);
  });

  it('takes a refusal whose error list holds odd entries (a null, a string) as a refusal, and remembers it', async () => {
    sb = await commerceSandbox({ orders: 5 });
    sb.commerce.faults.inject({
      route: 'POST /rest/default/V1/integration/admin/token',
      status: 401,
      body: JSON.stringify({ message: 'The account sign-in was incorrect or your account is disabled temporarily.', errors: [null, 'x', { message: 'Invalid login %1', parameters: [[[['deep']]]] }] }),
      times: Infinity,
    });
    const pay = payFor(sb);
    const errors = [await rejection(pay.orders.get(1)), ...(await Promise.all([2, 3, 4].map((id) => rejection(pay.orders.get(id)))))];
    for (const error of errors) expect(error).toMatchObject({ code: 'COMMERCE_AUTH_FAILED', status: 502 });
    expect(errors[0]!.message).toContain('The account sign-in was incorrect or your account is disabled temporarily. (Invalid login %1)');
    // One login, as for any refusal: a platform locks the account after a few.
    expect(sb.commerce.faults.list()[0]?.hits).toBe(1);
  });

  it('remembers refusals whose bodies would make their message huge or deep (a repeated placeholder, a nested provider list)', async () => {
    // Written out: JSON.stringify itself cannot nest 20,000 deep.
    const deep = `${'['.repeat(20_000)}"google"${']'.repeat(20_000)}`;
    const bodies = [
      { code: 'COMMERCE_AUTH_FAILED', body: JSON.stringify({ message: '%1'.repeat(1_000), parameters: ['x'.repeat(600_000)] }) },
      { code: 'COMMERCE_TWO_FACTOR_REQUIRED', body: `{"message":"Please use the 2fa provider-specific endpoints to obtain a token.${'!'.repeat(200_000)}","parameters":{"active_providers":[${deep},"google"]}}` },
    ];
    for (const { code, body } of bodies) {
      sb = await commerceSandbox({ orders: 5 });
      sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', status: 401, body, times: Infinity });
      const pay = payFor(sb);
      const errors = [await rejection(pay.orders.get(1)), ...(await Promise.all([2, 3].map((id) => rejection(pay.orders.get(id)))))];
      for (const error of errors) {
        expect(error.code).toBe(code);
        expect(error.message.length).toBeLessThan(3_000);
      }
      expect(sb.commerce.faults.list()[0]?.hits).toBe(1);
      await sb.close();
      sb = undefined;
    }
  });

  it('remembers a refused login for a minute: calls meanwhile fail with its error, without logging in', async () => {
    let clock = Date.UTC(2030, 0, 1);
    // Three refused logins in a row lock the account: one login per call would lock it below.
    sb = await commerceSandbox({ orders: 5, lockoutFailures: 3 }, () => clock);
    const pay = payFor(sb, { now: () => clock, commerce: { password: 'wrong-password' } });
    const first = await rejection(pay.orders.get(1));
    clock += 30_000;
    const later = [...(await Promise.all([1, 2, 3].map((id) => rejection(pay.orders.get(id))))), await rejection(collect(pay.orders.iterate({ pageSize: 2 })))];
    for (const error of [first, ...later]) {
      expect(error.code).toBe('COMMERCE_AUTH_FAILED');
      expect(error.message).toContain('The account sign-in was incorrect');
    }
    for (const error of later) expect(error.message).toContain('Remembered from the login refused at 2030-01-01T00:00:00.000Z: no new login is tried before 2030-01-01T00:01:00.000Z');
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, unauthorized: 0 });

    clock += 30_000; // the minute is over: one new attempt, refused and remembered again
    expect((await rejection(pay.orders.get(1))).message).not.toContain('Remembered');
    await rejection(pay.orders.get(1));
    expect(sb.commerce.stats().tokenRequests).toBe(2);

    // The account was never locked: with the password now right, the next login after the cooldown (two
    // minutes, for a second refusal in a row) works.
    sb.commerce.setPassword('wrong-password');
    clock += 60_000;
    expect((await rejection(pay.orders.get(1))).message).toContain('no new login is tried before 2030-01-01T00:03:00.000Z');
    clock += 60_000;
    expect((await pay.orders.get(1)).entity_id).toBe(1);
  });

  it('holds off the next login after one left unanswered (a time-out): the platform may have counted a refusal', async () => {
    let clock = Date.UTC(2030, 0, 1);
    // Three refused logins in a row lock the account: one login per call would lock it below, slow answers or not.
    sb = await commerceSandbox({ orders: 5, lockoutFailures: 3 }, () => clock);
    const slow = sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 400, times: Infinity });
    const pay = payFor(sb, { now: () => clock, commerce: { password: 'wrong-password' }, http: { attemptTimeoutMs: 150, totalTimeoutMs: 1_000, maxRetries: 0 } });
    expect((await rejection(pay.orders.get(1))).code).toBe('UPSTREAM_TIMEOUT');
    for (const id of [2, 3, 4]) {
      const error = await rejection(pay.orders.get(id));
      expect(error.code).toBe('UPSTREAM_TIMEOUT');
      expect(error.message).toContain('got no answer in time, so whether the platform refused it is unknown');
      expect(error.message).toContain('Remembered from the login left unanswered at 2030-01-01T00:00:00.000Z: no new login is tried before 2030-01-01T00:01:00.000Z');
    }
    // One login went out: the time-outs after it are remembered, not sent (a login the platform is slow to answer still reaches it).
    expect(sb.commerce.faults.list().find((fault) => fault.id === slow)?.hits).toBe(1);
    // With the platform quick and the password right again, the login after the cooldown works: the account was never locked.
    sb.commerce.faults.remove(slow);
    sb.commerce.setPassword('wrong-password');
    clock += 60_000;
    expect((await pay.orders.get(1)).entity_id).toBe(1);
  });

  it('logs in again once the remembered refusal is cleared in the shared store, as its message says, on every instance', async () => {
    const clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5, twoFactor: true }, () => clock);
    const adminTokens = new MemoryAdminTokenStore({ now: () => clock });
    const [a, b] = [1, 2].map(() => payFor(sb!, { now: () => clock, stores: { adminTokens } }));
    expect((await rejection(a!.orders.get(1))).code).toBe('COMMERCE_TWO_FACTOR_REQUIRED');
    expect((await rejection(b!.orders.get(1))).message).toContain('Remembered from the login refused');
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    // 2FA switched off for the API account, and the key ending in |login-refused cleared, as the message says.
    sb.commerce.setTwoFactor(false);
    await adminTokens.set(`paywidget:commerce-admin-token:${sb.commerceUrl}|${sb.commerceUsername}|login-refused`, 'none', 1);
    expect((await a!.orders.get(1)).entity_id).toBe(1);
    expect((await b!.orders.get(2)).entity_id).toBe(2);
    expect(sb.commerce.stats().tokenRequests).toBe(2);
  });

  it('sends no login for a flight every caller left while it read the store, beside the one a later caller started', async () => {
    sb = await commerceSandbox({ orders: 5 });
    let gate: (() => void) | undefined;
    let reads = 0;
    /** A store without a refresh lock whose second read (inside the first flight) is slow, as I/O may be. */
    class SlowStore extends MemoryAdminTokenStore {
      override async get(key: string): Promise<string | undefined> {
        const value = await super.get(key);
        if (++reads === 2) await new Promise<void>((resolve) => (gate = resolve));
        return value;
      }
    }
    const pay = payFor(sb, { stores: { adminTokens: new SlowStore() } });
    const controller = new AbortController();
    const first = pay.orders.get(1, { signal: controller.signal }).then(() => undefined, (error: unknown) => error as Error);
    await eventually(() => gate);
    controller.abort(); // the only caller gives up while its flight reads the store
    expect((await pay.orders.get(2)).entity_id).toBe(2); // a later caller's own flight logs in
    gate!();
    expect((await first)?.name).toBe('AbortError');
    await new Promise((resolve) => setTimeout(resolve, 50)); // a login the abandoned flight sent would have arrived
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('never locks the account, however long a wrong password stays: refusals in a row wait longer, up to past the lockout window', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5 }, () => clock); // Magento's defaults: the 6th refusal within 30 minutes of the last locks
    const pay = payFor(sb, { now: () => clock, commerce: { password: 'rotated-by-ops' } });
    const loginsAt: number[] = [];
    for (let minute = 0; minute <= 180; minute++, clock += 60_000) {
      const before = sb.commerce.stats().tokenRequests;
      await rejection(pay.orders.get(1));
      if (sb.commerce.stats().tokenRequests > before) loginsAt.push(minute);
    }
    // 1, 2 and 4 minutes apart, then 31: never six within 30 minutes of each other.
    expect(loginsAt.slice(0, 6)).toEqual([0, 1, 3, 7, 38, 69]);
    sb.commerce.setPassword('rotated-by-ops');
    clock += 31 * 60_000;
    expect((await pay.orders.get(1)).entity_id).toBe(1);
  });

  it('after a password rotation, forgets the rejected token and stops logging in until the cooldown ends', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5 }, () => clock);
    const pay = payFor(sb, { now: () => clock });
    await pay.orders.get(1);
    sb.commerce.setPassword('rotated');
    sb.commerce.expireTokens(); // the cached token stops working too
    sb.commerce.resetStats();
    for (let i = 0; i < 4; i++) expect((await rejection(pay.orders.get(1))).code).toBe('COMMERCE_AUTH_FAILED');
    // One order call met the dead token and one login was refused; the other calls sent nothing.
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, unauthorized: 1 });

    sb.commerce.setPassword(sb.commercePassword);
    clock += 60_000;
    expect((await pay.orders.get(2)).entity_id).toBe(2);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, tokensIssued: 1, unauthorized: 1 });
  });

  it('stops waiting for a login when the caller aborts (Ctrl-C during the CLI\'s first request)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 1_500 });
    const started = performance.now();
    const summary = await payFor(sb).orders.sync({ checkpoint: 'c', signal: AbortSignal.timeout(50), onOrder: () => {} });
    expect(summary).toMatchObject({ complete: false, delivered: 0 });
    expect(performance.now() - started).toBeLessThan(750); // not the login's 1.5 s
  });

  it('rejects a caller that stops waiting for the login with its signal’s reason, not an upstream error', async () => {
    sb = await commerceSandbox({ orders: 5 });
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 1_500 });
    const controller = new AbortController();
    const reason = new Error('request closed');
    setTimeout(() => controller.abort(reason), 50);
    await expect(payFor(sb).orders.get(1, { signal: controller.signal })).rejects.toBe(reason); // was 502 UPSTREAM_UNREACHABLE
  });

  it('keeps a login going while a caller without a signal still waits for it', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb);
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 500 });
    const [order, stopped] = await Promise.all([pay.orders.get(1), pay.orders.sync({ checkpoint: 'c', signal: AbortSignal.timeout(50), onOrder: () => {} })]);
    expect(stopped).toMatchObject({ complete: false, delivered: 0 });
    expect(order.entity_id).toBe(1);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, tokensIssued: 1 });
  });

  it('is not retried after a 5xx either (the token call has no retries)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', status: 503 });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error.code).toBe('COMMERCE_ERROR');
    expect(error.message).toContain('HTTP 503');
    expect(sb.commerce.faults.list()).toEqual([]);
  });

  it('refuses a token that cannot go into an Authorization header, keeps nothing, and logs in again next time', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb);
    // A proxy's answer, or a token with a line break: sent, it would fail as if the platform were unreachable, for hours.
    for (const body of ['"tok\\nInjected: x"', '"Bearer abc"', '" abc123 "', '"\\u0000abc"']) {
      sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', status: 200, body, headers: { 'content-type': 'application/json' } });
      const error = await rejection(pay.orders.get(1));
      expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
      expect(error.message).toContain('cannot be sent as a Bearer credential');
      expect(error.message).not.toContain('abc');
    }
    expect(sb.commerce.stats().orderReads).toBe(0);
    expect((await pay.orders.get(1)).entity_id).toBe(1); // the next call logs in again and works
  });

  it('logs in again over a stored token that cannot be sent (kept there by an older version)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const keys: string[] = [];
    const adminTokens = new (class extends MemoryAdminTokenStore {
      override set(key: string, token: string, ttlMs: number) {
        keys.push(key);
        return super.set(key, token, ttlMs);
      }
    })();
    await payFor(sb, { stores: { adminTokens } }).orders.get(1);
    expect(keys).toHaveLength(1);
    await adminTokens.set(keys[0]!, 'tok\nInjected: x', 3_600_000);
    expect((await payFor(sb, { stores: { adminTokens } }).orders.get(2)).entity_id).toBe(2);
    expect(sb.commerce.stats().tokenRequests).toBe(2);
  });

  it('turns the two-factor refusal into its own error naming the 2FA endpoint', async () => {
    sb = await commerceSandbox({ orders: 5, twoFactor: true });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error.code).toBe('COMMERCE_TWO_FACTOR_REQUIRED');
    expect(error.message).toContain('Please use the 2fa provider-specific endpoints to obtain a token.');
    expect(error.message).toContain('POST /rest/V1/tfa/provider/google/authenticate');
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('remembers the two-factor refusal too', async () => {
    sb = await commerceSandbox({ orders: 5, twoFactor: true });
    const pay = payFor(sb);
    await rejection(pay.orders.get(1));
    const again = await rejection(pay.orders.get(1));
    expect(again.code).toBe('COMMERCE_TWO_FACTOR_REQUIRED');
    expect(again.message).toMatch(/Please use the 2fa provider-specific endpoints[\s\S]*Remembered from the login refused at/);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('logs in again for a caller whose refused token comes back from a refresh begun for another one', async () => {
    sb = await commerceSandbox({ orders: 1 });
    const inner = new MemoryAdminTokenStore();
    // A store read held up (a Redis round trip under load) while two refusals arrive.
    const gate = { held: Promise.resolve() };
    const store = { get: async (key: string) => (await gate.held, inner.get(key)), set: (key: string, token: string, ttlMs: number) => inner.set(key, token, ttlMs) };
    const { commerce, http } = resolveCommerceConfig({ env: {}, commerce: { url: sb.commerceUrl, username: sb.commerceUsername, password: sb.commercePassword } });
    const tokens = new AdminTokens({ config: commerce!, http, logger: captureLogger(), store });
    const t0 = await tokens.get();
    const t1 = await tokens.refresh(t0); // t0 refused: a login
    let release!: () => void;
    gate.held = new Promise((resolve) => (release = resolve));
    const late = tokens.refresh(t0); // a call sent with t0 long ago, refused only now: its refresh reads the store
    const fresh = tokens.refresh(t1); // t1 refused meanwhile: joins that refresh, which will answer t1
    release();
    expect(await late).toBe(t1);
    const t2 = await fresh;
    expect([t0, t1]).not.toContain(t2);
    expect(sb.commerce.stats().tokensIssued).toBe(3);
  });

  it('can be shared between instances through the store', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const adminTokens = new MemoryAdminTokenStore();
    const a = payFor(sb, { stores: { adminTokens } });
    const b = payFor(sb, { stores: { adminTokens } });
    await a.orders.get(1);
    await b.orders.get(2);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    // One instance's refresh serves the other.
    sb.commerce.expireTokens();
    await a.orders.get(3);
    await b.orders.get(4);
    expect(sb.commerce.stats().tokenRequests).toBe(2);
  });

  it('shares a token and a refused login between instances that read other store scopes (Magento counts refusals per user)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const adminTokens = new MemoryAdminTokenStore();
    const [views, all] = ['default', 'all'].map((scope) => payFor(sb!, { stores: { adminTokens }, commerce: { scope } }));
    await views!.orders.get(1);
    await all!.orders.get(2);
    expect(sb.commerce.stats().tokenRequests).toBe(1);
    sb.commerce.setPassword('rotated');
    sb.commerce.expireTokens();
    sb.commerce.resetStats();
    expect((await rejection(views!.orders.get(3))).code).toBe('COMMERCE_AUTH_FAILED');
    const second = await rejection(all!.orders.get(4));
    expect(second.message).toContain('Remembered from the login refused');
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('records a refused login that every caller stopped waiting for: the next call does not send the password again', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb);
    sb.commerce.setPassword('rotated');
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 400 });
    // The shopper's request goes away while the login runs; Magento counts the refusal all the same.
    await expect(pay.orders.get(1, { signal: AbortSignal.timeout(100) })).rejects.toMatchObject({ name: 'TimeoutError' });
    await eventually(() => sb!.commerce.stats().tokenRequests === 1 || undefined, 3_000, 'the login to reach the platform');
    await new Promise((resolve) => setTimeout(resolve, 600)); // its refusal has come back by now
    const next = await rejection(pay.orders.get(1));
    expect(next.message).toContain('Remembered from the login refused');
    expect(sb.commerce.stats().tokenRequests).toBe(1);
  });

  it('shares a refused login through the store: after a password rotation, one login for the whole fleet', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5 }, () => clock);
    const adminTokens = new MemoryAdminTokenStore({ now: () => clock });
    const fleet = [1, 2, 3].map(() => payFor(sb!, { now: () => clock, stores: { adminTokens } }));
    for (const pay of fleet) await pay.orders.get(1);
    sb.commerce.setPassword('rotated');
    sb.commerce.expireTokens();
    sb.commerce.resetStats();

    // One after another: this store has no refresh lock, so logins that start together are not serialized (Redis's are).
    const first = await rejection(fleet[0]!.orders.get(2));
    clock += 1_000;
    const others = [await rejection(fleet[1]!.orders.get(2)), await rejection(fleet[2]!.orders.get(2))];
    expect(first.code).toBe('COMMERCE_AUTH_FAILED');
    expect(first.message).not.toContain('Remembered');
    for (const error of others) {
      expect(error.code).toBe('COMMERCE_AUTH_FAILED');
      expect(error.message).toContain('The account sign-in was incorrect');
      expect(error.message).toContain('Remembered from the login refused at 2030-01-01T00:00:00.000Z');
    }
    // Each instance met the dead token once; only the first tried to log in.
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, unauthorized: 3 });
    // Later calls on every instance fail at once, without sending the dead token again.
    for (const pay of fleet) expect((await rejection(pay.orders.get(3))).message).toContain('no new login is tried before 2030-01-01T00:01:00.000Z');
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 1, unauthorized: 3 });

    // After the cooldown, with the password right again, one login serves the fleet.
    sb.commerce.setPassword(sb.commercePassword);
    clock += 60_000;
    for (const pay of fleet) expect((await pay.orders.get(4)).entity_id).toBe(4);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, tokensIssued: 1 });
  });

  it('starts counting refusals afresh after a login that worked, for the other instances too', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await commerceSandbox({ orders: 5 }, () => clock);
    const adminTokens = new MemoryAdminTokenStore({ now: () => clock });
    const [one, two] = [1, 2].map(() => payFor(sb!, { now: () => clock, stores: { adminTokens } }));
    sb.commerce.setPassword('rotated');
    expect((await rejection(one!.orders.get(1))).code).toBe('COMMERCE_AUTH_FAILED');
    sb.commerce.setPassword(sb.commercePassword);
    clock += 61_000;
    expect((await one!.orders.get(1)).entity_id).toBe(1);

    // Rotated again five minutes later, while the store would still count a refusal as "in a row": after the login
    // that worked, this is a first refusal again, so another login is tried a minute on (not two).
    clock += 5 * 60_000;
    sb.commerce.setPassword('rotated-again');
    sb.commerce.expireTokens();
    sb.commerce.resetStats();
    expect((await rejection(two!.orders.get(2))).code).toBe('COMMERCE_AUTH_FAILED');
    sb.commerce.setPassword(sb.commercePassword);
    clock += 61_000;
    expect((await two!.orders.get(2)).entity_id).toBe(2);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, tokensIssued: 1, unauthorized: 1 });
  });

  it('uses the configured scope in every path', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const pay = payFor(sb, { commerce: { scope: 'all' } });
    sb.commerce.faults.inject({ route: '/rest/default/V1/orders/:id', status: 500, times: Infinity });
    expect((await pay.orders.get(1)).entity_id).toBe(1);
  });

  it('says to check the URL and the scope, not the read method, when the token path has no route', async () => {
    sb = await commerceSandbox({ orders: 5 });
    sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', status: 404, body: '{"message":"Request does not match any route."}' });
    const error = await rejection(payFor(sb).orders.get(1));
    expect(error).toMatchObject({ code: 'COMMERCE_ERROR', details: { upstreamStatus: 404 } });
    expect(error.message).toContain('check COMMERCE_URL (commerce.url) and COMMERCE_SCOPE (commerce.scope)');
    expect(error.message).not.toContain('readMethod');
  });

  it('says to check the URL and the scope when the platform has no store view by that code (Magento: no route)', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const error = await rejection(payFor(sb, { commerce: { scope: 'no_such_store' } }).orders.get(1));
    expect(error).toMatchObject({ code: 'COMMERCE_ERROR', details: { upstreamStatus: 404 } });
    expect(error.message).toBe('The commerce platform refused the admin token request with HTTP 404: Request does not match any route; the platform has no such path for this method: check COMMERCE_URL (commerce.url) and COMMERCE_SCOPE (commerce.scope).');
  });
});
