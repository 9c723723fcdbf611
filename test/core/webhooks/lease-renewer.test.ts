/**
 * A handler slower than the lease: its claim is renewed while it runs (real time, as a Redis lease runs),
 * a run that finished is never undone by a duplicate that ran beside it, and a hung one lets go at last.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createPay, MemoryClaimStore, type Pay, type PayOptions } from 'paywidget-server';
import { captureLogger } from '../../helpers/capture-logger.js';
import { MAX_RENEWED_LEASES } from '../../../src/core/webhooks/lease-renewer.js';
import { CountingStore, deferred, delivery, payWithClock, post, sleep, SECRET, type Delivery } from './helpers.js';

const paid = { type: 'payment.succeeded', data: { payment_id: 'pay_1' } };

/** A pay instance on the real clock, so its leases run out in real time. */
function realTimePay(overrides: Partial<PayOptions> = {}): Pay {
  return createPay({ payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: SECRET }, env: {}, ...overrides });
}

const now = () => Math.floor(Date.now() / 1000);

/** Posts until the answer is not 409, every `everyMs`, for at most `forMs`; the last answer. */
async function postUntilNotInProgress(pay: Pay, d: Delivery, everyMs: number, forMs: number) {
  const end = Date.now() + forMs;
  let answer = await post(pay, d);
  while (answer.status === 409 && Date.now() < end) {
    await sleep(everyMs);
    answer = await post(pay, d);
  }
  return answer;
}

describe('POST /webhooks: a handler slower than the lease', () => {
  it('keeps its event while it runs: a duplicate arriving after several leases is told it is in progress, and runs nothing', async () => {
    const pay = realTimePay({ webhooks: { leaseMs: 150 } });
    const gate = deferred();
    let runs = 0;
    pay.webhooks.onAny(async () => {
      runs++;
      await gate.promise;
    });
    const d = delivery(paid, { eventId: 'evt_slow', timestamp: now() });
    const first = post(pay, d);
    await sleep(600); // four leases
    const duplicate = await post(pay, d);
    expect([duplicate.status, duplicate.json.error?.code]).toEqual([409, 'DUPLICATE_IN_PROGRESS']);
    gate.resolve();
    expect((await first).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('once a duplicate ran beside it (its lease lapsed), the run that succeeded marks the event done: the other failing lets no third run through', async () => {
    // The test clock jumps past the lease at once, so no renewal comes in between: as when the store could not renew.
    const logger = captureLogger();
    const { pay, clock } = payWithClock({ webhooks: { leaseMs: 60_000, toleranceSeconds: false }, logger });
    const gates = [deferred(), deferred()];
    let runs = 0;
    pay.webhooks.onAny(async () => {
      const run = runs++;
      await gates[run]?.promise;
      if (run === 1) throw new Error('the duplicate run failed');
    });
    const d = delivery(paid, { eventId: 'evt_lapsed' });
    const first = post(pay, d);
    await sleep(5);
    clock.now += 60_001;
    const second = post(pay, d);
    await sleep(5);
    expect(runs).toBe(2);
    gates[0]!.resolve();
    expect((await first).json).toEqual({ received: true });
    gates[1]!.resolve();
    expect((await second).status).toBe(500);
    // The sender retries the failed delivery: the event already ran to the end once.
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(2);
    expect(logger.text()).toContain('lease ran out before completion');
  });

  it('stops renewing a claim once its handler failed and the claim was released: the retry runs at once', async () => {
    const pay = realTimePay({ webhooks: { leaseMs: 150 } });
    let runs = 0;
    pay.webhooks.onAny(async () => {
      if (++runs === 1) throw new Error('the first run fails');
    });
    const d = delivery(paid, { eventId: 'evt_failed_once', timestamp: now() });
    expect((await post(pay, d)).status).toBe(500);
    await sleep(100); // two renewal ticks: a renewal now would take the released claim again
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(2);
  });

  it('stops renewing a claim once its handler succeeded: no "claim lost" warning for an event done', async () => {
    const logger = captureLogger();
    const pay = realTimePay({ webhooks: { leaseMs: 150 }, logger });
    pay.webhooks.onAny(() => {});
    const d = delivery(paid, { eventId: 'evt_done', timestamp: now() });
    expect((await post(pay, d)).status).toBe(200);
    await sleep(100);
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(logger.text()).not.toContain('lost while its handler ran');
  });

  it('renews again after it went idle: a slow handler of a later event keeps its claim', async () => {
    // Renewals every 100 ms: a busy machine would have to stall the event loop for 200 ms to let the lease lapse.
    const pay = realTimePay({ webhooks: { leaseMs: 300 } });
    let slowRuns = 0;
    const gate = deferred();
    pay.webhooks.on('payment.succeeded', async (event) => {
      if (event.id !== 'evt_later_slow') return;
      slowRuns++;
      await gate.promise;
    });
    expect((await post(pay, delivery(paid, { eventId: 'evt_quick', timestamp: now() }))).status).toBe(200);
    await sleep(200); // the renewer ticks with nothing running, and goes idle
    // Another payment: the same bytes under another event id would be a replay.
    const slow = delivery({ type: 'payment.succeeded', data: { payment_id: 'pay_2' } }, { eventId: 'evt_later_slow', timestamp: now() });
    const first = post(pay, slow);
    await sleep(900); // three leases
    expect((await post(pay, slow)).status).toBe(409);
    gate.resolve();
    expect((await first).status).toBe(200);
    expect(slowRuns).toBe(1);
  });

  it('leaves a claim store without renew() alone: a handler slower than the lease raises nothing', async () => {
    const store = new CountingStore(new MemoryClaimStore());
    const pay = realTimePay({ webhooks: { leaseMs: 150 }, stores: { claims: store } });
    pay.webhooks.onAny(() => sleep(200));
    // An error thrown from the renewal timer would be uncaught, and fail this test run.
    expect((await post(pay, delivery(paid, { eventId: 'evt_no_renew', timestamp: now() }))).status).toBe(200);
    await sleep(100);
  });

  it(`lets go of a hung handler's event after ${MAX_RENEWED_LEASES} leases, so a retry runs it`, async () => {
    const logger = captureLogger();
    // Long enough that a busy machine's stalled event loop (renewals every 50 ms) does not let the lease lapse early.
    const leaseMs = 150;
    const pay = realTimePay({ webhooks: { leaseMs }, logger });
    let runs = 0;
    pay.webhooks.onAny(async () => {
      if (++runs === 1) await new Promise(() => {}); // never settles
    });
    const d = delivery(paid, { eventId: 'evt_hung', timestamp: now() });
    void post(pay, d);
    await sleep(4 * leaseMs);
    expect((await post(pay, d)).status).toBe(409); // renewed past its first lease
    const later = await postUntilNotInProgress(pay, d, leaseMs / 2, 20 * leaseMs + 5_000);
    expect(later.json).toEqual({ received: true });
    expect(runs).toBe(2);
    expect(logger.text()).toContain(`still running after ${MAX_RENEWED_LEASES} leases`);
  });

  it('lets the stores of a Pay the app dropped be collected once its handlers are done, before the renewal timer ticks again', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A Pay per tenant or per test: each holds its stores (megabytes at the default sizes) while reachable.
    const dropped = await (async () => {
      const claims = new MemoryClaimStore();
      const pay = realTimePay({ stores: { claims } }); // the default lease: the renewal timer ticks every 5 s
      pay.webhooks.onAny(() => {});
      expect((await post(pay, delivery(paid, { eventId: 'evt_dropped', timestamp: now() }))).status).toBe(200);
      return new WeakRef(claims);
    })();
    for (let i = 0; i < 20 && dropped.deref() !== undefined; i++) {
      await sleep(10);
      gc();
    }
    expect(dropped.deref()).toBeUndefined(); // held by the timer until its tick
  });
});
