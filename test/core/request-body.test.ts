import { describe, expect, it } from 'vitest';
import { createPay, type PayResponse } from 'paywidget-server';

/** A pay instance whose resolveCheckout shows what the JSON route read. */
function payShowingBody(options: { maxBodyBytes?: number } = {}) {
  const seen: unknown[] = [];
  const pay = createPay({ env: {}, ...options, resolveCheckout: ({ body }) => void seen.push(body) as never });
  return { pay, seen };
}

const code = (response: PayResponse | null) => (JSON.parse(String(response?.body)) as { error?: { code: string } }).error?.code;

describe('the JSON routes read their body as UTF-8', () => {
  it('refuses bytes declared in another charset (415), and reads UTF-8 and ASCII however they are named', async () => {
    const { pay, seen } = payShowingBody();
    const post = (contentType: string, rawBody: Uint8Array) => pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': contentType }, rawBody });
    const latin1 = await post('application/json; charset=ISO-8859-1', Buffer.from('{"orderId":"café"}', 'latin1'));
    expect([latin1?.status, code(latin1)]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    expect(seen).toEqual([]);
    for (const contentType of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=us-ascii', 'application/json']) {
      await post(contentType, Buffer.from('{"orderId":"o-1"}'));
    }
    expect(seen).toEqual(Array(4).fill({ orderId: 'o-1' }));
  });

  it('has nothing to misread without bytes: a GET or an empty POST naming another charset is answered as usual', async () => {
    const { pay } = payShowingBody();
    const headers = { 'content-type': 'application/json; charset=iso-8859-1' };
    const get = await pay.handle({ method: 'GET', path: '/payments/pay_unknown', headers });
    expect([get?.status, code(get)]).toEqual([404, 'PAYMENT_NOT_FOUND']);
    const empty = await pay.handle({ method: 'POST', path: '/widget-token', headers, rawBody: Buffer.alloc(0) });
    expect(code(empty)).not.toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('the JSON routes\' body', () => {
  it('takes a body of only white space as no body, and counts a string body in UTF-8 bytes against the limit', async () => {
    const { pay, seen } = payShowingBody({ maxBodyBytes: 1_000 });
    const post = (rawBody: string) => pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody });
    await post('\n  ');
    expect(seen).toEqual([{}]);
    // 600 characters, 1,200 bytes: past the limit, though its length in characters is not.
    const accented = await post(JSON.stringify({ note: 'é'.repeat(600) }));
    expect([accented?.status, code(accented)]).toEqual([413, 'BODY_TOO_LARGE']);
    expect(seen).toHaveLength(1);
  });
});
