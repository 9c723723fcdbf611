import { describe, expect, it } from 'vitest';
import { MemoryClaimStore, type ClaimStore, type WebhookFailure } from 'paywidget-server';
import { captureLogger } from '../../helpers/capture-logger.js';
import { deferred, delivery, holdingHandler, payWithClock, post, sleep, T0 } from './helpers.js';

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
      // The lease (15 s by default) in seconds, but never more than 10: a retry sooner may find the event done.
      expect(answer.headers['retry-after']).toBe('10');
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

  it('logs what a handler threw that is not an Error in a field of its own (pino\'s serializer drops such a cause), with the event\'s id and type', async () => {
    const logger = captureLogger();
    const { pay } = payWithClock({ logger });
    pay.webhooks.onAny(() => Promise.reject({ code: 'ER_LOCK_DEADLOCK' }));
    expect((await post(pay, delivery(paid, { eventId: 'evt_plain' }))).status).toBe(500);
    const line = JSON.parse(logger.lines.find((l) => l.includes('webhook handler failed'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'error', eventId: 'evt_plain', type: 'payment.succeeded', cause: { code: 'ER_LOCK_DEADLOCK' } });
  });

  it('logs a refused delivery with the reason and the fix, and the event id it claims', async () => {
    const logger = captureLogger();
    const { pay } = payWithClock({ logger });
    const forged = delivery(paid, { eventId: 'evt_forged', secret: 'whsec_someone_else' });
    expect((await post(pay, forged)).status).toBe(400);
    const line = JSON.parse(logger.lines.find((l) => l.includes('webhook refused'))!) as Record<string, string>;
    expect(line).toMatchObject({ level: 'warn', code: 'WEBHOOK_SIGNATURE_MISMATCH', eventId: 'evt_forged' });
    expect(line.reason).toContain('PAY_WEBHOOK_SECRET');
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
    expect(second.headers['retry-after']).toBe('10');
    expect(second.json.error?.code).toBe('DUPLICATE_IN_PROGRESS');
    gate.resolve();
    expect((await first).status).toBe(200);
  });

  it('a claim whose lease ran out (a process that died mid-handler) is processed by the next delivery: 15 s by default', async () => {
    const { pay, clock } = payWithClock();
    let runs = 0;
    const dead = deferred(); // never resolved: the handler's process is gone
    pay.webhooks.onAny(async () => {
      runs++;
      if (runs === 1) await dead.promise;
    });
    const d = delivery(paid, { eventId: 'evt_killed' });
    void post(pay, d);
    await sleep(5);
    clock.now += 14_000;
    expect((await post(pay, d)).status).toBe(409);
    clock.now += 1_001; // with a 60 s lease, a sender retrying for less than a minute gave up on a 409 each time
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect(runs).toBe(2);
  });

  it('forgets completed event ids after the retention period', async () => {
    const { pay, clock } = payWithClock({ webhooks: { retentionMs: 10_000, toleranceSeconds: false, leaseMs: 5_000 } });
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

  it('remembers an event id at least as long as its delivery can pass the timestamp check, whatever retentionMs says', async () => {
    const { pay, clock } = payWithClock({ webhooks: { retentionMs: 60_000 } }); // tolerance 300 s, lease 15 s
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery(paid, { eventId: 'evt_short_retention' });
    await post(pay, d);
    clock.now += 120_000; // past retentionMs, still inside the tolerance: the same bytes pass verification
    expect((await post(pay, d)).json.duplicate).toBe(true);
    clock.now += 2 * 300_000 + 15_000; // past the whole window a signature is accepted in
    expect((await post(pay, d)).status).toBe(400); // stale timestamp: refused before any store is touched
    expect(runs).toBe(1);
  });
});

describe('POST /webhooks: a payload that carries its event id', () => {
  it('needs no replay guard: the same bytes under another id are refused by verify, and no signature is kept', async () => {
    const bound: string[] = [];
    class Recording extends MemoryClaimStore {
      override bind(key: string, value: string, ttlMs: number) {
        bound.push(key);
        return super.bind(key, value, ttlMs);
      }
    }
    const { pay } = payWithClock({ stores: { claims: new Recording() } });
    let runs = 0;
    pay.webhooks.onAny(() => void runs++);
    const d = delivery({ ...paid, id: 'evt_signed' }, { eventId: 'evt_signed' });
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
    expect((await post(pay, { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_other' } })).json.error?.code).toBe('WEBHOOK_EVENT_ID_MISMATCH');
    expect(runs).toBe(1);
    expect(bound).toEqual([]);
    // Without an id in the payload, the guard binds the signature as before.
    expect((await post(pay, delivery(paid, { eventId: 'evt_bare' }))).status).toBe(200);
    expect(bound).toHaveLength(1);
    expect(bound[0]).toMatch(/^sig:[0-9a-f]{64}$/);
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

  it('refuses a replay at once, even while the original is still running', async () => {
    const { pay } = payWithClock();
    const held = holdingHandler(pay);
    const d = delivery(paid, { eventId: 'evt_a' });
    const replay = { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_b' } };
    const first = post(pay, d);
    await sleep(5);
    expect((await post(pay, replay)).json.error?.code).toBe('WEBHOOK_REPLAYED');
    held.release();
    expect((await first).status).toBe(200);
    expect((await post(pay, replay)).json.error?.code).toBe('WEBHOOK_REPLAYED');
    expect(held.runs()).toBe(1);
  });

  it('refuses a replay while the original runs, with no tolerance and a retention shorter than the lease', async () => {
    // Without a tolerance a signature is remembered for retentionMs, but never less than the lease.
    const { pay, clock } = payWithClock({ webhooks: { toleranceSeconds: false, retentionMs: 1_000, leaseMs: 60_000 } });
    const held = holdingHandler(pay);
    const d = delivery(paid, { eventId: 'evt_slow' });
    const first = post(pay, d);
    await sleep(5);
    clock.now += 1_500;
    expect((await post(pay, { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_forged' } })).json.error?.code).toBe('WEBHOOK_REPLAYED');
    held.release();
    expect((await first).status).toBe(200);
    expect(held.runs()).toBe(1);
  });

  it('refuses a replay of a delivery whose handler failed, and still processes the genuine retry once', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    pay.webhooks.onAny(() => {
      if (++runs === 1) throw new Error('boom');
    });
    const d = delivery(paid, { eventId: 'evt_failed' });
    expect((await post(pay, d)).status).toBe(500);
    // The captured bytes under a fresh id would run the handlers, then the sender's retry would run them again.
    const replay = await post(pay, { ...d, headers: { ...d.headers, 'x-pay-event-id': 'evt_fresh' } });
    expect(replay.json.error?.code).toBe('WEBHOOK_REPLAYED');
    expect(runs).toBe(1);
    const retry = delivery(paid, { eventId: 'evt_failed', timestamp: T0 + 30 });
    expect((await post(pay, retry)).json).toEqual({ received: true });
    expect((await post(pay, retry)).json).toEqual({ received: true, duplicate: true });
    expect(runs).toBe(2);
  });

  it('a re-signed retry is recorded once the event is done, so it cannot be replayed later under another id', async () => {
    const { pay } = payWithClock();
    const gate = deferred();
    pay.webhooks.onAny(() => gate.promise);
    const first = post(pay, delivery(paid, { eventId: 'evt_x' }));
    await sleep(5);
    const resigned = delivery(paid, { eventId: 'evt_x', timestamp: T0 + 1 });
    // While the first attempt runs, the re-signed retry is bound to its event id and asked to come back.
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
      bind: async (key, value, ttlMs) => (await jitter(), inner.bind(key, value, ttlMs)),
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
    // An options object that names the key without a value leaves the default as it is.
    const unset = payWithClock({ maxBodyBytes: 50, webhooks: { maxBodyBytes: undefined } }).pay;
    expect((await post(unset, delivery({ type: 'x', pad: 'x'.repeat(50) }))).status).toBe(413);
  });

  it('a parsed body without the raw one → 500 WEBHOOK_BODY_NOT_RAW (the app\'s setup: the sender retries once it is fixed) naming the framework fixes', async () => {
    const logger = captureLogger();
    const { pay } = payWithClock({ logger });
    const d = delivery(paid);
    const answer = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, parsedBody: paid });
    expect(answer?.status).toBe(500);
    // Logged once, as the error it is (the router logs no second line for this 5xx).
    expect(logger.lines.map((line) => JSON.parse(line) as { level: string; code?: string })).toEqual([expect.objectContaining({ level: 'error', code: 'WEBHOOK_BODY_NOT_RAW' })]);
    const { error } = JSON.parse(answer!.body as string) as { error: { code: string; message: string } };
    expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
    // Through no adapter: every framework's fix.
    expect(error.message).toContain('Express: a body parser such as express.json() read it first. Mount payMiddleware before it');
    expect(error.message).toContain('export const config = { api: { bodyParser: false } }');
    expect(error.message).toContain('Next.js App Router: the Request body was read before createRouteHandlers got it');
    expect(error.message).toMatch(/Koa: .*Mount payRouter\(pay\)\.routes\(\) before the body parser/);
    expect(error.message).toMatch(/parsedBody is set/);
    const none = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers });
    expect(JSON.parse(none!.body as string).error.code).toBe('WEBHOOK_BODY_NOT_RAW');
  });

  it.each([
    ['express', /Express: .*Mount payMiddleware before it/],
    ['koa', /Koa: .*Mount payRouter\(pay\)\.routes\(\) before the body parser/],
    ['next-pages', /Next\.js Pages Router: .*export const config = \{ api: \{ bodyParser: false \} \}/],
    ['next-app', /Next\.js App Router: .*Hand the Request over unread/],
  ] as const)('a request through the %s adapter is told only that framework\'s fix', async (framework, fix) => {
    const { pay } = payWithClock();
    const d = delivery(paid);
    const answer = await pay.handle({ method: 'POST', path: '/webhooks', headers: d.headers, parsedBody: paid, framework });
    const { error } = JSON.parse(answer!.body as string) as { error: { code: string; message: string } };
    expect(error.code).toBe('WEBHOOK_BODY_NOT_RAW');
    expect(error.message).toMatch(fix);
    expect(error.message.match(/(Express|Koa|Next\.js Pages Router|Next\.js App Router): /g)).toHaveLength(1);
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

describe('webhook options are validated at creation', () => {
  it.each([
    [{ maxBodyBytes: 0 }, /webhooks\.maxBodyBytes must be a positive whole number of bytes/],
    [{ retentionMs: 1.5 }, /webhooks\.retentionMs must be a positive whole number/],
    [{ leaseMs: -1 }, /webhooks\.leaseMs/],
    // Renewed every lease/3: past Node's longest timer, that timer would fire every millisecond.
    [{ leaseMs: 3 * 2 ** 31 }, /webhooks\.leaseMs must be at most 2147483647 ms \(about 24\.8 days\), the longest timer Node keeps/],
    // Twice that, in ms, is past what Redis takes as an expiry: every delivery would be answered 503.
    [{ toleranceSeconds: 1e16 }, /webhooks\.toleranceSeconds must be a positive number of seconds up to 2592000 \(30 days\)/],
    [{ eventType: 'type' }, /webhooks\.eventType must be a function/],
  ])('%o', (webhooks, message) => {
    expect(() => payWithClock({ webhooks: webhooks as never })).toThrow(message);
  });
});
