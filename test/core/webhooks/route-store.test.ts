import { describe, expect, it } from 'vitest';
import { MemoryClaimStore, MemoryLedgerStore, type ClaimStore, type LedgerStore } from 'paywidget-server';
import { captureLogger } from '../../helpers/capture-logger.js';
import { CountingStore, delivery, payWithClock, post, sleep, T0 } from './helpers.js';

const paid = { type: 'payment.succeeded', data: { payment_id: 'pay_1', order_id: 'ord_1' } };

// Each test twice: a store answering with promises (as Redis does), and one answering and failing at once (as a store may).
describe.each([['answering with promises', false], ['answering at once', true]])('POST /webhooks: the store, %s', (_, atOnce) => {
  const counting = (inner: ClaimStore) => new CountingStore(inner, atOnce);

  it('is never touched before the signature checked out', async () => {
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, webhooks: { maxBodyBytes: 2048 } });
    const d = delivery(paid);
    const forgeries = [
      delivery(paid, { secret: 'whsec_attacker' }),
      { ...d, body: (d.body as string).replace('pay_1', 'pay_2') },
      { ...d, headers: { ...d.headers, 'x-pay-signature': 'f'.repeat(64) } },
      { ...d, headers: { ...d.headers, 'x-pay-signature': 'nope' } },
      { ...d, headers: { ...d.headers, 'x-pay-timestamp': String(T0 + 1) } },
      { ...d, headers: { 'x-pay-event-id': 'evt_1' } },
      delivery(paid, { timestamp: T0 - 3_600 }),
      delivery('{not json'),
      { ...d, body: 'x'.repeat(4096) },
    ];
    for (const forged of forgeries) expect((await post(pay, forged)).status).toBeGreaterThanOrEqual(400);
    const parsed = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, parsedBody: paid });
    expect(parsed?.status).toBe(500);
    expect(store.calls).toEqual([]);
    expect((await post(pay, d)).status).toBe(200);
    expect(store.calls.length).toBeGreaterThan(0);
  });

  it('a store that throws: 503 with Retry-After, then the retry is processed once the store is back', async () => {
    const logger = captureLogger();
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, logger });
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_store' });
    store.failing = new Set(['claim']);
    const down = await post(pay, d);
    expect(down.status).toBe(503);
    expect(down.json.error?.code).toBe('STORE_UNAVAILABLE');
    expect(down.headers['retry-after']).toBe('5');
    expect(runs).toBe(0);
    expect(logger.text()).toContain('ECONNREFUSED');
    store.failing = new Set();
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('the event claim failing after the signature was bound: 503, and the same bytes are processed on retry', async () => {
    const inner = new MemoryClaimStore();
    let failNext = true;
    const flaky: ClaimStore = {
      claim: (key, leaseMs) => {
        if (key.startsWith('evt:') && failNext) {
          failNext = false;
          return Promise.reject(new Error('timeout'));
        }
        return inner.claim(key, leaseMs);
      },
      complete: inner.complete.bind(inner),
      release: inner.release.bind(inner),
      bind: inner.bind.bind(inner),
    };
    const { pay } = payWithClock({ stores: { claims: flaky } });
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_half' });
    expect((await post(pay, d)).status).toBe(503);
    expect(runs).toBe(0);
    // The signature stays bound to its own event id, so the retry is not taken for a replay.
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(1);
  });

  it('a ledger store that fails: 503 with Retry-After, no merchant handler or onError runs, and the retry is processed', async () => {
    const ledger = new MemoryLedgerStore();
    let ledgerDown = true;
    const failingLedger: LedgerStore = {
      record: (observation) => {
        if (!ledgerDown) return ledger.record(observation);
        const down = new Error('ECONNREFUSED 127.0.0.1:6379 (test ledger is down)');
        if (atOnce) throw down;
        return Promise.reject(down);
      },
      get: (id) => ledger.get(id),
      list: (query) => ledger.list(query),
      byOrder: (id) => ledger.byOrder(id),
      forget: (id, condition) => ledger.forget(id, condition),
    };
    const { pay } = payWithClock({ stores: { ledger: failingLedger } });
    let runs = 0;
    let told = 0;
    pay.webhooks.onAny(() => void runs++);
    pay.webhooks.onError(() => void told++);
    const d = delivery({ type: 'payment.succeeded', data: { payment_id: 'pay_1', status: 'succeeded' } }, { eventId: 'evt_ledger' });
    const down = await post(pay, d);
    expect(down.status).toBe(503);
    expect(down.json.error?.code).toBe('STORE_UNAVAILABLE');
    expect(down.headers['retry-after']).toBe('5');
    expect([runs, told]).toEqual([0, 0]);
    ledgerDown = false;
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(1);
    expect((await pay.payments.get('pay_1'))?.status).toBe('succeeded');
  });

  it('a store that fails after the handler ran still answers 200 (the work is done), and logs it', async () => {
    const logger = captureLogger();
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, logger });
    pay.webhooks.onAny(() => {
      store.failing = new Set(['complete']);
    });
    expect((await post(pay, delivery(paid, { eventId: 'evt_c' }))).status).toBe(200);
    expect(logger.text()).toMatch(/failed to complete a claim/);
  });

  /** A pay instance whose claim store starts failing to complete as soon as a handler runs; counts the runs. */
  function payWhoseStoreFailsToComplete() {
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store } });
    const counted = { runs: 0 };
    pay.webhooks.onAny(() => {
      counted.runs++;
      store.failing = new Set(['complete']);
    });
    return { pay, store, counted };
  }

  it('a completion that failed is retried in the background while the lease lasts, so a later duplicate is recognised', async () => {
    const { pay, store, counted } = payWhoseStoreFailsToComplete();
    const d = delivery(paid, { eventId: 'evt_later' });
    expect((await post(pay, d)).status).toBe(200);
    expect((await post(pay, d)).status).toBe(409); // still claimed, not done
    store.failing = new Set();
    for (let i = 0; i < 40 && (await post(pay, d)).status === 409; i++) await sleep(25);
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(counted.runs).toBe(1);
  });

  it('a completion that fails again on its first retries is retried until it lands: pay.drain() waits, then a duplicate is recognised', async () => {
    const { pay, store, counted } = payWhoseStoreFailsToComplete();
    const d = delivery(paid, { eventId: 'evt_down_a_while' });
    expect((await post(pay, d)).status).toBe(200);
    // Down for the first attempt and the next two retries (100 and 200 ms later), back for the third.
    const original = store.complete.bind(store);
    let attempts = 0;
    store.complete = async (...args) => {
      if (++attempts === 3) store.failing = new Set();
      return original(...args);
    };
    await pay.drain();
    expect(attempts).toBe(3);
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(counted.runs).toBe(1);
  });

  it('a release that failed after a handler failure is retried in the background, so the sender\'s retry runs the event', async () => {
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store } });
    let runs = 0;
    pay.webhooks.onAny(() => {
      if (++runs > 1) return;
      store.failing = new Set(['release']);
      throw new Error('handler failed');
    });
    const d = delivery(paid, { eventId: 'evt_release_later' });
    expect((await post(pay, d)).status).toBe(500);
    store.failing = new Set();
    await pay.drain();
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(2);
  });

  it('a store that fails to release after a handler failure still answers 500', async () => {
    const store = counting(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store } });
    pay.webhooks.onAny(() => {
      store.failing = new Set(['release']);
      throw new Error('handler failed');
    });
    expect((await post(pay, delivery(paid, { eventId: 'evt_r' }))).status).toBe(500);
  });
});

describe('POST /webhooks: a completion retried in the background, after the claim was renewed', () => {
  /** A CountingStore that renews, so the lease renewer keeps the claim of a slow handler. */
  class RenewingStore extends CountingStore {
    renew(key: string, token: string, leaseMs: number) {
      return this.inner.renew!(key, token, leaseMs);
    }
  }

  it('keeps trying until the renewed lease ends, so a store back late in it still marks the event done', async () => {
    const store = new RenewingStore(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, webhooks: { leaseMs: 3_000 } });
    let runs = 0;
    pay.webhooks.onAny(async () => {
      if (++runs > 1) return;
      await sleep(1_100); // renewed once, at a third of the lease: the claim is held until 4 s in
      store.failing = new Set(['complete']);
    });
    const started = performance.now();
    const d = delivery(paid, { eventId: 'evt_renewed' });
    expect((await post(pay, d)).status).toBe(200);
    // Down past the back-off's next step (it would have given up about 2.6 s in), back 3.3 s in, before the lease ends.
    const back = setTimeout(() => (store.failing = new Set()), 3_300 - (performance.now() - started));
    try {
      await pay.drain();
    } finally {
      clearTimeout(back);
    }
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });
});
