import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { adminToken, login, read } from './commerce-helpers.js';
import { call } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const SIGN_IN = { message: 'The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.' };
const UNAUTHORIZED = { message: "The consumer isn't authorized to access %resources.", parameters: { resources: 'Magento_Sales::actions_view' } };

describe('commerce sandbox: admin token', () => {
  it('starts beside the payment service with its own port and credentials, password kept out of logs', async () => {
    sb = await startSandbox();
    expect(sb.commerceUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.commerceUrl).not.toBe(sb.paymentUrl);
    expect(sb.commerceUsername).toBe('sandbox_admin');
    expect(sb.commercePassword).toMatch(/^pw_[0-9a-f]{24}$/);
    expect(inspect(sb)).not.toContain(sb.commercePassword);
    expect(JSON.stringify(sb)).not.toContain(sb.commercePassword);
    expect(JSON.parse(JSON.stringify(sb))).toMatchObject({ commerceUrl: sb.commerceUrl, commercePassword: '[redacted]' });
  });

  it('answers the token as a bare JSON string, with and without the scope segment', async () => {
    sb = await startSandbox({ commerce: { username: 'admin', password: 'secret123' } });
    for (const path of ['/rest/default/V1/integration/admin/token', '/rest/V1/integration/admin/token', '/rest/all/V1/integration/admin/token']) {
      const res = await login(sb, { username: 'admin', password: 'secret123' }, path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.text).toMatch(/^"[0-9a-f]{32}"$/);
    }
    // A store code Magento does not have is read as part of the path: no route, not a store error.
    const unknown = await login(sb, { username: 'admin', password: 'secret123' }, '/rest/nostore/V1/integration/admin/token');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ message: 'Request does not match any route.' });
  });

  it('refuses wrong credentials with 401 and missing ones with 400 input errors', async () => {
    sb = await startSandbox();
    expect(await login(sb, { username: sb.commerceUsername, password: 'nope' })).toMatchObject({ status: 401, json: SIGN_IN });
    expect(await login(sb, { username: 'nobody', password: sb.commercePassword })).toMatchObject({ status: 401, json: SIGN_IN });
    const missing = await login(sb, { username: sb.commerceUsername });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ message: 'One or more input exceptions have occurred.', errors: [{ message: '"%fieldName" is required. Enter and try again.', parameters: { fieldName: 'password' } }] });
    expect((await login(sb, 'not json{')).status).toBe(400);
    const empty = await call(`${sb.commerceUrl}/rest/default/V1/integration/admin/token`, { method: 'POST' });
    expect(empty.status).toBe(400);
    expect(empty.json.errors).toHaveLength(2);
  });

  it('locks the account after 6 failures in a row, the right password included, until lockoutMs passes', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await startSandbox({ now: () => clock });
    for (let i = 0; i < 5; i++) expect((await login(sb, { username: sb.commerceUsername, password: 'bad' })).status).toBe(401);
    expect((await login(sb)).status).toBe(200); // a success resets the count
    for (let i = 0; i < 6; i++) await login(sb, { username: sb.commerceUsername, password: 'bad' });
    expect(await login(sb)).toMatchObject({ status: 401, json: SIGN_IN });
    clock += 29 * 60_000;
    expect((await login(sb)).status).toBe(401);
    clock += 60_000;
    expect((await login(sb)).status).toBe(200);
  });

  it('counts failures per user name: another name\'s failures lock no one else (Magento keys its throttle on the name)', async () => {
    sb = await startSandbox();
    for (let i = 0; i < 6; i++) expect((await login(sb, { username: 'someone_else', password: 'bad' })).status).toBe(401);
    expect((await login(sb)).status).toBe(200);
    expect(await login(sb, { username: 'someone_else', password: 'bad' })).toMatchObject({ status: 401, json: SIGN_IN });
  });

  it('counts failures in a row only while each comes within lockoutMs of the one before, as Magento does', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await startSandbox({ now: () => clock });
    for (let i = 0; i < 5; i++) await login(sb, { username: sb.commerceUsername, password: 'bad' });
    clock += 30 * 60_000; // a quiet half hour starts the count over
    for (let i = 0; i < 5; i++) await login(sb, { username: sb.commerceUsername, password: 'bad' });
    expect((await login(sb)).status).toBe(200);
  });

  it('refuses logins with the 2FA message in two-factor mode', async () => {
    sb = await startSandbox({ commerce: { twoFactor: true } });
    const res = await login(sb);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ message: 'Please use the 2fa provider-specific endpoints to obtain a token.', parameters: { active_providers: ['google'] } });
    sb.commerce.setTwoFactor(false);
    expect((await login(sb)).status).toBe(200);
  });

  it('expires tokens by the injected clock, or on demand', async () => {
    let clock = Date.UTC(2030, 0, 1);
    sb = await startSandbox({ now: () => clock, commerce: { tokenLifetimeMs: 60_000 } });
    const token = await adminToken(sb);
    expect((await read(sb, token, '/rest/V1/orders/1')).status).toBe(200);
    clock += 60_000;
    expect(await read(sb, token, '/rest/V1/orders/1')).toMatchObject({ status: 401, json: UNAUTHORIZED });
    const fresh = await adminToken(sb);
    sb.commerce.expireTokens();
    expect((await read(sb, fresh, '/rest/V1/orders/1')).status).toBe(401);
    expect(sb.commerce.issuedTokens()).toEqual([token, fresh]);
    expect(sb.commerce.stats()).toMatchObject({ tokenRequests: 2, tokensIssued: 2, unauthorized: 2, orderReads: 1 });
  });

  it('answers 401 with Magento\'s body for a missing, unknown or malformed token', async () => {
    sb = await startSandbox();
    for (const auth of [undefined, 'Bearer nope', 'Basic abc']) {
      const res = await fetch(`${sb.commerceUrl}/rest/V1/orders`, { headers: auth ? { authorization: auth } : {} });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual(UNAUTHORIZED);
    }
  });
});
