import { describe, expect, it } from 'vitest';
import { MemoryClaimStore, WebhookHandlerError, type ClaimStore, type WebhookEvent, type WebhookFailure } from 'paywidget-server';
import { createDispatcher } from '../../../src/core/webhooks/dispatch.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { CountingStore, deferred, delivery, payWithClock, post, sleep, T0 } from './helpers.js';

const paid = { type: 'payment.succeeded', data: { payment_id: 'pay_1', order_id: 'ord_1' } };

describe('POST /webhooks: exactly once per event id', () => {
  it('50 concurrent deliveries of one event run the handler once; the rest get 409 with Retry-After', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    pay.webhooks.on('payment.succeeded', async () => {
      runs++;
      await sleep(50);
    });
    const d = delivery(paid, { eventId: 'evt_concurrent' });
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(pay, d)));
    expect(runs).toBe(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const busy = answers.filter((a) => a.status === 409);
    expect(busy).toHaveLength(49);
    for (const answer of busy) {
      expect(answer.json.error?.code).toBe('DUPLICATE_IN_PROGRESS');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('concurrent deliveries re-signed with other timestamps still run the handler once', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    pay.webhooks.onAny(async () => {
      runs++;
      await sleep(30);
    });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(pay, delivery(paid, { eventId: 'evt_resigned', timestamp: T0 - i }))));
    expect(runs).toBe(1);
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array<number>(19).fill(409)]);
  });

  it('a handler that throws once: 500, then 200 on the retry, then 200 duplicate; processed exactly once', async () => {
    const logger = captureLogger();
    const { pay } = payWithClock({ logger });
    let attempts = 0;
    let processed = 0;
    const failures: WebhookFailure[] = [];
    pay.webhooks.on('payment.succeeded', async () => {
      attempts++;
      if (attempts === 1) throw new Error('database is down: password=hunter2');
      processed++;
    });
    pay.webhooks.onError((failure) => {
      failures.push(failure);
    });
    const d = delivery(paid, { eventId: 'evt_retry' });

    const first = await post(pay, d);
    expect(first.status).toBe(500);
    expect(first.json.error?.code).toBe('WEBHOOK_HANDLER_FAILED');
    // The sender sees neither the handler's message nor anything else from inside.
    expect(JSON.stringify(first.json)).not.toContain('hunter2');
    expect(logger.text()).toContain('database is down');
    expect(failures).toHaveLength(1);
    expect(failures[0]!.error.message).toMatch(/database is down/);
    expect(failures[0]!.event).toMatchObject({ id: 'evt_retry', type: 'payment.succeeded', payload: paid, timestamp: T0 });

    expect(await post(pay, d)).toMatchObject({ status: 200, json: { received: true } });
    expect(await post(pay, d)).toMatchObject({ status: 200, json: { received: true, duplicate: true } });
    expect(processed).toBe(1);
    expect(attempts).toBe(2);
  });

  it('a duplicate of a completed event is answered without running any handler', async () => {
    const { pay } = payWithClock();
    const seen: string[] = [];
    pay.webhooks.on('payment.succeeded', (e) => void seen.push(`typed ${e.id}`));
    pay.webhooks.onAny((e) => void seen.push(`any ${e.id}`));
    const d = delivery(paid, { eventId: 'evt_done' });
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(seen).toEqual(['typed evt_done', 'any evt_done']);
    for (let i = 0; i < 3; i++) expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    // A re-signed retry of the same event id is a duplicate too.
    expect((await post(pay, delivery(paid, { eventId: 'evt_done', timestamp: T0 + 5 }))).json).toEqual({ received: true, duplicate: true });
    expect(seen).toHaveLength(2);
  });

  it('a duplicate while the first attempt runs gets 409 + Retry-After, never 200', async () => {
    const { pay } = payWithClock();
    const gate = deferred();
    const started = deferred();
    pay.webhooks.onAny(async () => {
      started.resolve();
      await gate.promise;
    });
    const d = delivery(paid, { eventId: 'evt_slow' });
    const first = post(pay, d);
    await started.promise;
    const second = await post(pay, d);
    expect(second.status).toBe(409);
    expect(second.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(second.json.error?.code).toBe('DUPLICATE_IN_PROGRESS');
    gate.resolve();
    expect((await first).status).toBe(200);
  });

  it('a claim whose lease ran out (a crashed worker) is processed by the next delivery', async () => {
    const { pay, clock } = payWithClock({ webhooks: { leaseMs: 1_000, toleranceSeconds: false } });
    let runs = 0;
    const hang = deferred();
    pay.webhooks.onAny(async () => {
      runs++;
      if (runs === 1) await hang.promise;
    });
    const d = delivery(paid, { eventId: 'evt_crash' });
    void post(pay, d);
    await sleep(5);
    expect((await post(pay, d)).status).toBe(409);
    clock.now += 1_001;
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(2);
    hang.resolve();
  });

  it('forgets completed event ids after the retention period', async () => {
    const { pay, clock } = payWithClock({ webhooks: { retentionMs: 10_000, toleranceSeconds: false } });
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_retention' });
    await post(pay, d);
    clock.now += 9_000;
    expect((await post(pay, d)).json.duplicate).toBe(true);
    clock.now += 1_001; // without a tolerance the signature is kept as long as the event id
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(2);
  });
});

describe('POST /webhooks: the replay guard', () => {
  it('refuses a captured delivery replayed with a new event id, without running a handler', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_original' });
    expect((await post(pay, d)).status).toBe(200);
    const replay = await post(pay, { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_forged' } });
    expect(replay.status).toBe(400);
    expect(replay.json.error?.code).toBe('WEBHOOK_REPLAYED');
    expect(runs).toBe(1);
    // The refused id was not burnt: its own genuine delivery is processed.
    expect((await post(pay, delivery({ type: 'other' }, { eventId: 'evt_forged' }))).status).toBe(200);
    expect(runs).toBe(2);
  });

  it('answers a replay 409 while the original is still in progress (the same bytes are running), then refuses it', async () => {
    const { pay } = payWithClock();
    const gate = deferred();
    let runs = 0;
    pay.webhooks.onAny(async () => {
      runs++;
      await gate.promise;
    });
    const d = delivery(paid, { eventId: 'evt_a' });
    const replay = { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_b' } };
    const first = post(pay, d);
    await sleep(5);
    expect((await post(pay, replay)).json.error?.code).toBe('DUPLICATE_IN_PROGRESS');
    gate.resolve();
    expect((await first).status).toBe(200);
    expect((await post(pay, replay)).json.error?.code).toBe('WEBHOOK_REPLAYED');
    expect(runs).toBe(1);
  });

  it('a re-signed retry is recorded once the event is done, so it cannot be replayed later under another id', async () => {
    const { pay } = payWithClock();
    const gate = deferred();
    pay.webhooks.onAny(() => gate.promise);
    const first = post(pay, delivery(paid, { eventId: 'evt_x' }));
    await sleep(5);
    const resigned = delivery(paid, { eventId: 'evt_x', timestamp: T0 + 1 });
    // While the first attempt runs, its signature is given back (it could be the running attempt's own, on another instance).
    expect((await post(pay, resigned)).status).toBe(409);
    gate.resolve();
    await first;
    expect((await post(pay, resigned)).json).toEqual({ received: true, duplicate: true });
    expect((await post(pay, { ...resigned, headers: { ...resigned.headers, 'x-pay-event-id': 'evt_y' } })).json.error?.code).toBe('WEBHOOK_REPLAYED');
  });

  it('identical deliveries racing on a store whose calls interleave (several instances) are never taken for replays', async () => {
    // Each claim lands after a random delay, as on a shared store reached by several instances.
    const inner = new MemoryClaimStore();
    const jitter = () => sleep(Math.random() * 4);
    const store: ClaimStore = {
      claim: async (key, leaseMs) => (await jitter(), inner.claim(key, leaseMs)),
      complete: async (key, token, retentionMs) => (await jitter(), inner.complete(key, token, retentionMs)),
      release: async (key, token) => (await jitter(), inner.release(key, token)),
    };
    const { pay } = payWithClock({ stores: { claims: store } });
    let runs = 0;
    pay.webhooks.onAny(async () => {
      runs++;
      await jitter();
    });
    for (let event = 0; event < 20; event++) {
      const d = delivery({ ...paid, n: event }, { eventId: `evt_race_${event}` });
      const answers = await Promise.all(Array.from({ length: 4 }, async () => {
        for (;;) {
          const answer = await post(pay, d);
          if (answer.status !== 409) return answer;
          await jitter();
        }
      }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    }
    expect(runs).toBe(20);
  });

  it('after a failed attempt the same signed delivery is processed on retry (not taken for a replay)', async () => {
    const { pay } = payWithClock();
    let attempts = 0;
    pay.webhooks.onAny(() => {
      if (++attempts === 1) throw new Error('boom');
    });
    const d = delivery(paid, { eventId: 'evt_f' });
    expect((await post(pay, d)).status).toBe(500);
    expect((await post(pay, d)).status).toBe(200);
  });
});

describe('POST /webhooks: the store', () => {
  it('is never touched before the signature checked out', async () => {
    const store = new CountingStore(new MemoryClaimStore());
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
    expect(parsed?.status).toBe(400);
    expect(store.calls).toEqual([]);
    expect((await post(pay, d)).status).toBe(200);
    expect(store.calls.length).toBeGreaterThan(0);
  });

  it('a store that throws: 503 with Retry-After, then the retry is processed once the store is back', async () => {
    const logger = captureLogger();
    const store = new CountingStore(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, logger });
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_store' });
    store.failing = new Set(['claim']);
    const down = await post(pay, d);
    expect(down.status).toBe(503);
    expect(down.json.error?.code).toBe('STORE_UNAVAILABLE');
    expect(down.headers['retry-after']).toBeDefined();
    expect(runs).toBe(0);
    expect(logger.text()).toContain('ECONNREFUSED');
    store.failing = new Set();
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('one of the two claims failing releases the other, so the retry is not blocked', async () => {
    const inner = new MemoryClaimStore();
    let failNext = true;
    const store = new CountingStore(inner);
    const flaky = {
      claim: (key: string, leaseMs: number) => {
        if (key.startsWith('evt:') && failNext) {
          failNext = false;
          return Promise.reject(new Error('timeout'));
        }
        return store.claim(key, leaseMs);
      },
      complete: store.complete.bind(store),
      release: store.release.bind(store),
    };
    const { pay } = payWithClock({ stores: { claims: flaky } });
    const d = delivery(paid, { eventId: 'evt_half' });
    expect((await post(pay, d)).status).toBe(503);
    expect(store.calls).toContain(`release sig:${d.headers['x-pay-signature']}`);
    expect((await post(pay, d)).status).toBe(200);
  });

  it('a store that fails after the handler ran still answers 200 (the work is done), and logs it', async () => {
    const logger = captureLogger();
    const store = new CountingStore(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store }, logger });
    pay.webhooks.onAny(() => {
      store.failing = new Set(['complete']);
    });
    expect((await post(pay, delivery(paid, { eventId: 'evt_c' }))).status).toBe(200);
    expect(logger.text()).toMatch(/failed to complete a claim/);
  });

  it('a completion that failed is retried in the background while the lease lasts, so a later duplicate is recognised', async () => {
    const store = new CountingStore(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store } });
    let runs = 0;
    pay.webhooks.onAny(() => {
      runs++;
      store.failing = new Set(['complete']);
    });
    const d = delivery(paid, { eventId: 'evt_later' });
    expect((await post(pay, d)).status).toBe(200);
    expect((await post(pay, d)).status).toBe(409); // still claimed, not done
    store.failing = new Set();
    for (let i = 0; i < 40 && (await post(pay, d)).status === 409; i++) await sleep(25);
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(1);
  });

  it('a store that fails to release after a handler failure still answers 500', async () => {
    const store = new CountingStore(new MemoryClaimStore());
    const { pay } = payWithClock({ stores: { claims: store } });
    pay.webhooks.onAny(() => {
      store.failing = new Set(['release']);
      throw new Error('handler failed');
    });
    expect((await post(pay, delivery(paid, { eventId: 'evt_r' }))).status).toBe(500);
  });
});

describe('POST /webhooks: the body', () => {
  it('over the limit → 413 BODY_TOO_LARGE (1 MiB by default)', async () => {
    const { pay } = payWithClock();
    const big = delivery({ type: 'x', pad: 'x'.repeat(1024 * 1024) });
    const answer = await post(pay, big);
    expect(answer.status).toBe(413);
    expect(answer.json.error?.code).toBe('BODY_TOO_LARGE');
    const small = payWithClock({ webhooks: { maxBodyBytes: 100 } }).pay;
    expect((await post(small, delivery({ type: 'x', pad: 'x'.repeat(100) }))).status).toBe(413);
    // The pay-wide limit is the default for webhooks.
    const pay50 = payWithClock({ maxBodyBytes: 50 }).pay;
    expect((await post(pay50, delivery({ type: 'x', pad: 'x'.repeat(50) }))).status).toBe(413);
  });

  it('a parsed body without the raw one → 400 WEBHOOK_BODY_NOT_RAW naming the framework fixes', async () => {
    const { pay } = payWithClock();
    const d = delivery(paid);
    const answer = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, parsedBody: paid });
    expect(answer?.status).toBe(400);
    const { error } = JSON.parse(answer!.body as string) as { error: { code: string; message: string } };
    expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
    expect(error.message).toContain('Express: mount paywidget-server before express.json()');
    expect(error.message).toContain('export const config = { api: { bodyParser: false } }');
    expect(error.message).toMatch(/Koa: mount the paywidget-server router before the body parser/);
    expect(error.message).toMatch(/parsedBody is set/);
    const none = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers });
    expect(JSON.parse(none!.body as string).error.code).toBe('WEBHOOK_BODY_NOT_RAW');
  });

  it('takes rawBody as bytes', async () => {
    const { pay } = payWithClock();
    const d = delivery(paid);
    expect((await post(pay, { ...d, body: Buffer.from(d.body as string) })).status).toBe(200);
  });

  it('only POST: GET /webhooks → 405', async () => {
    const { pay } = payWithClock();
    expect((await pay.handle({ method: 'GET', path: '/webhooks', headers: {} }))?.status).toBe(405);
  });
});

describe('handlers: on, onAny, onError, event types', () => {
  it('chooses handlers by the payload type; onAny sees every event; untyped events reach only onAny', async () => {
    const { pay } = payWithClock();
    const seen: string[] = [];
    pay.webhooks.on('payment.succeeded', (e) => void seen.push(`succeeded:${e.id}`));
    pay.webhooks.on(['payment.failed', 'payment.canceled'], (e) => void seen.push(`ended:${e.type}`));
    pay.webhooks.onAny((e) => void seen.push(`any:${String(e.type)}`));
    await post(pay, delivery(paid, { eventId: 'e1' }));
    await post(pay, delivery({ type: 'payment.failed' }, { eventId: 'e2' }));
    await post(pay, delivery({ type: 'payment.canceled' }, { eventId: 'e3' }));
    await post(pay, delivery({ kind: 'no type field' }, { eventId: 'e4' }));
    await post(pay, delivery([1, 2], { eventId: 'e5' }));
    expect(seen).toEqual([
      'succeeded:e1', 'any:payment.succeeded', 'ended:payment.failed', 'any:payment.failed',
      'ended:payment.canceled', 'any:payment.canceled', 'any:undefined', 'any:undefined',
    ]);
  });

  it('handlers get a frozen { id, type, payload, timestamp }', async () => {
    const { pay } = payWithClock();
    let event: WebhookEvent | undefined;
    pay.webhooks.on('payment.succeeded', (e) => void (event = e));
    await post(pay, delivery(paid, { eventId: 'evt_shape' }));
    expect(event).toEqual({ id: 'evt_shape', type: 'payment.succeeded', payload: paid, timestamp: T0 });
    expect(Object.isFrozen(event)).toBe(true);
  });

  it('the merchant can supply the event type extractor', async () => {
    const { pay } = payWithClock({ webhooks: { eventType: (p) => (p as { event?: { name?: string } }).event?.name } });
    const seen: unknown[] = [];
    pay.webhooks.on('bank.approved', (e) => void seen.push(e.payload));
    await post(pay, delivery({ event: { name: 'bank.approved' } }));
    expect(seen).toEqual([{ event: { name: 'bank.approved' } }]);
  });

  it('an extractor that throws fails the delivery like a handler (500, retried, onError told)', async () => {
    let calls = 0;
    const { pay } = payWithClock({ webhooks: { eventType: () => { if (++calls === 1) throw new Error('bad extractor'); return 'ok'; } } });
    const failures: WebhookFailure[] = [];
    pay.webhooks.onError((f) => void failures.push(f));
    const d = delivery(paid, { eventId: 'evt_ex' });
    expect((await post(pay, d)).status).toBe(500);
    expect(failures[0]?.error.message).toBe('bad extractor');
    expect(failures[0]?.event.type).toBeUndefined();
    expect((await post(pay, d)).status).toBe(200);
  });

  it('runs all handlers even when one fails; onError hears each failure; a throwing onError changes nothing', async () => {
    const logger = captureLogger();
    const { pay } = payWithClock({ logger });
    const ran: string[] = [];
    pay.webhooks.on('payment.succeeded', () => { ran.push('a'); throw new Error('a failed'); });
    pay.webhooks.on('payment.succeeded', async () => { ran.push('b'); });
    pay.webhooks.onAny(() => { ran.push('c'); throw 'a string'; });
    const heard: string[] = [];
    pay.webhooks.onError(({ error }) => void heard.push(error.message));
    pay.webhooks.onError(() => { throw new Error('onError itself failed'); });
    const answer = await post(pay, delivery(paid, { eventId: 'evt_many' }));
    expect(answer.status).toBe(500);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(heard).toEqual(['a failed', 'A webhook handler threw a value that is not an Error; see `cause`.']);
    expect(logger.text()).toContain('onError itself failed');
  });

  it('registrations return a function that removes them', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    const off = pay.webhooks.on('payment.succeeded', () => void runs++);
    const offAny = pay.webhooks.onAny(() => void runs++);
    off();
    offAny();
    off();
    await post(pay, delivery(paid));
    expect(runs).toBe(0);
  });

  // Unsubscribing splices the live list; the dispatcher must run the list as it was when the event arrived.
  it('a handler that unsubscribes itself mid-dispatch: every handler runs for this event, it does not for the next', async () => {
    const { pay } = payWithClock();
    const ran: string[] = [];
    // Each event its own payload: the same signed body under a new id is refused as a replay.
    const offA = pay.webhooks.onAny(() => {
      ran.push('A');
      offA();
    });
    pay.webhooks.onAny(() => void ran.push('B'));
    pay.webhooks.onAny(() => void ran.push('C'));
    expect((await post(pay, delivery({ ...paid, n: '1' }, { eventId: 'evt_self_1' }))).status).toBe(200);
    expect(ran).toEqual(['A', 'B', 'C']);
    ran.length = 0;
    expect((await post(pay, delivery({ ...paid, n: '2' }, { eventId: 'evt_self_2' }))).status).toBe(200);
    expect(ran).toEqual(['B', 'C']);
  });

  it('a handler that unsubscribes another mid-dispatch: the other still runs for this event, not for the next', async () => {
    const { pay } = payWithClock();
    const ran: string[] = [];
    pay.webhooks.onAny(() => {
      ran.push('X');
      offY();
    });
    const offY = pay.webhooks.onAny(() => void ran.push('Y'));
    expect((await post(pay, delivery({ ...paid, n: '1' }, { eventId: 'evt_other_1' }))).status).toBe(200);
    expect(ran).toEqual(['X', 'Y']);
    ran.length = 0;
    expect((await post(pay, delivery({ ...paid, n: '2' }, { eventId: 'evt_other_2' }))).status).toBe(200);
    expect(ran).toEqual(['X']);
  });

  it('a lone handler that throws (the one-handler path): dispatch rejects with WebhookHandlerError, onError told once', async () => {
    const dispatcher = createDispatcher(captureLogger(), (p) => (p as { type?: string }).type);
    const boom = new Error('lone handler failed');
    dispatcher.onAny(() => {
      throw boom;
    });
    const failures: WebhookFailure[] = [];
    dispatcher.onError((failure) => void failures.push(failure));
    const error = await dispatcher.dispatch({ id: 'evt_lone', payload: paid, timestamp: T0 }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookHandlerError);
    expect((error as WebhookHandlerError).errors).toEqual([boom]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ error: boom, event: { id: 'evt_lone', type: 'payment.succeeded' } });
  });

  it('refuses nonsense registrations', () => {
    const { pay } = payWithClock();
    expect(() => pay.webhooks.on('', () => {})).toThrow(TypeError);
    expect(() => pay.webhooks.on([], () => {})).toThrow(TypeError);
    expect(() => pay.webhooks.on('x', 'handler' as unknown as () => void)).toThrow(TypeError);
    expect(() => pay.webhooks.onAny(undefined as unknown as () => void)).toThrow(TypeError);
  });

  it('an event with no handler is still acknowledged and deduplicated', async () => {
    const { pay } = payWithClock();
    const d = delivery(paid);
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
  });
});

describe('webhook options are validated at creation', () => {
  it.each([
    [{ maxBodyBytes: 0 }, /webhooks\.maxBodyBytes must be a positive whole number of bytes/],
    [{ retentionMs: 1.5 }, /webhooks\.retentionMs must be a positive whole number/],
    [{ leaseMs: -1 }, /webhooks\.leaseMs/],
    [{ eventType: 'type' }, /webhooks\.eventType must be a function/],
  ])('%o', (webhooks, message) => {
    expect(() => payWithClock({ webhooks: webhooks as never })).toThrow(message);
  });
});
