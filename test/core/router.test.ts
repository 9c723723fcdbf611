import { describe, expect, it } from 'vitest';
import { createPay } from 'paywidget-server';

const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 'w' } });

describe('the core router', () => {
  it('answers HEAD like GET, without a body', async () => {
    const get = await pay.handle({ method: 'GET', path: '/payments/pay_unknown', headers: {} });
    const head = await pay.handle({ method: 'HEAD', path: '/payments/pay_unknown', headers: {} });
    expect(get?.status).toBe(404);
    expect(head?.status).toBe(404);
    expect(String(get?.body)).toContain('PAYMENT_NOT_FOUND');
    expect(head?.body).toBe('');
    expect(head?.headers['content-length']).toBe(String(Buffer.byteLength(String(get?.body))));
  });

  it('leaves OPTIONS to the app, so its CORS handling runs', async () => {
    expect(pay.matches('OPTIONS', '/widget-token')).toBe(false);
    expect(await pay.handle({ method: 'OPTIONS', path: '/widget-token', headers: {} })).toBeNull();
  });

  it('answers 405 with Allow for another method on a known path, and null for an unknown path', async () => {
    const response = await pay.handle({ method: 'DELETE', path: '/webhooks', headers: {} });
    expect(response?.status).toBe(405);
    expect(response?.headers.allow).toBe('POST');
    expect(pay.matches('DELETE', '/webhooks')).toBe(true);
    expect(await pay.handle({ method: 'POST', path: '/elsewhere', headers: {} })).toBeNull();
    expect(pay.matches('POST', '/elsewhere')).toBe(false);
    // HEAD where GET is not served: the 405 without its body, as every HEAD answer.
    const head = await pay.handle({ method: 'HEAD', path: '/webhooks', headers: {} });
    expect([head?.status, head?.body, head?.headers.allow, Number(head?.headers['content-length']) > 0]).toEqual([405, '', 'POST', true]);
    // A path served by GET is served by HEAD too, and Allow says so.
    const get = await pay.handle({ method: 'POST', path: '/payments/pay_1', headers: {} });
    expect([get?.status, get?.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it('takes a trailing slash as the path without it, and matches nothing for an empty segment elsewhere', async () => {
    expect(pay.matches('POST', '/webhooks/')).toBe(true);
    expect(pay.matches('GET', '/payments/pay_1/')).toBe(true);
    for (const path of ['//webhooks', '/payments//reconcile', '/payments/pay_1//', '/payments//']) {
      expect([path, pay.matches('GET', path), pay.matches('POST', path)]).toEqual([path, false, false]);
      expect(await pay.handle({ method: 'GET', path, headers: {} })).toBeNull();
    }
  });

  it('tells whether a route runs for a method (hasRoute), where matches only knows the path is ours', () => {
    expect(pay.hasRoute('POST', '/webhooks')).toBe(true);
    expect(pay.hasRoute('HEAD', '/payments/pay_1')).toBe(true);
    expect(pay.hasRoute('post', '/payments/pay_1/reconcile')).toBe(true);
    expect([pay.matches('PUT', '/webhooks'), pay.hasRoute('PUT', '/webhooks')]).toEqual([true, false]);
    expect(pay.hasRoute('OPTIONS', '/webhooks')).toBe(false);
    expect(pay.hasRoute('POST', '/elsewhere')).toBe(false);
  });

  it('finds a route whatever query string a custom adapter leaves on the path', async () => {
    const answer = await pay.handle({ method: 'GET', path: '/payments/pay_unknown?expand=1', headers: {} });
    expect(answer?.status).toBe(404);
    expect(String(answer?.body)).toContain('PAYMENT_NOT_FOUND');
  });
});
