import { describe, expect, expectTypeOf, it } from 'vitest';
import { PayError, WebhookHandlerError, type WebhookEvent, type WebhookFailure } from 'paywidget-server';
import { createDispatcher } from '../../../src/core/webhooks/dispatch.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { delivery, payWithClock, post, T0 } from './helpers.js';

const paid = { type: 'payment.succeeded', data: { payment_id: 'pay_1', order_id: 'ord_1' } };

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

  it("a handler registered for types gets an event typed as one of them (tsc checks the types)", async () => {
    const { pay } = payWithClock();
    const seen: string[] = [];
    pay.webhooks.on('payment.succeeded', (e) => {
      expectTypeOf(e.type).toEqualTypeOf<'payment.succeeded'>();
      seen.push(e.type);
    });
    pay.webhooks.on(['payment.failed', 'payment.canceled'], (e) => {
      expectTypeOf(e.type).toEqualTypeOf<'payment.failed' | 'payment.canceled'>();
      seen.push(e.type);
    });
    pay.webhooks.onAny((e) => expectTypeOf(e.type).toEqualTypeOf<string | undefined>());
    await post(pay, delivery(paid, { eventId: 'e1' }));
    await post(pay, delivery({ type: 'payment.canceled' }, { eventId: 'e2' }));
    expect(seen).toEqual(['payment.succeeded', 'payment.canceled']);
  });

  it('runs a handler once per event when its type is listed twice (a list built from configuration)', async () => {
    const { pay } = payWithClock();
    let runs = 0;
    pay.webhooks.on(['payment.succeeded', 'payment.succeeded'], () => void runs++);
    expect((await post(pay, delivery(paid, { eventId: 'e_twice' }))).status).toBe(200);
    expect(runs).toBe(1);
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
    const error = await Promise.resolve(dispatcher.dispatch({ id: 'evt_lone', payload: paid, timestamp: T0 })).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookHandlerError);
    expect((error as WebhookHandlerError).errors).toEqual([boom]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ error: boom, event: { id: 'evt_lone', type: 'payment.succeeded' } });
  });

  it('refuses nonsense registrations with INVALID_INPUT saying how to call it, not a TypeError', () => {
    const { pay } = payWithClock();
    const refusal = (register: () => unknown, field: string, message: RegExp) => {
      const error = (() => {
        try {
          register();
        } catch (thrown) {
          return thrown;
        }
        throw new Error('expected the registration to be refused');
      })();
      expect(error).toBeInstanceOf(PayError);
      expect(error).toMatchObject({ code: 'INVALID_INPUT', status: 400, details: { field } });
      expect((error as PayError).message).toMatch(message);
    };
    const handler = () => {};
    // The handler alone: was "TypeError: type is not iterable".
    refusal(() => pay.webhooks.on(handler as never, undefined as never), 'type', /webhooks\.on was given a function where the event type goes: .*webhooks\.on\('payment\.succeeded', handler\).*webhooks\.onAny\(handler\)/);
    refusal(() => pay.webhooks.on('', handler), 'type', /needs a non-empty event type .*got an empty or non-string type/);
    refusal(() => pay.webhooks.on([], handler), 'type', /got an empty array/);
    refusal(() => pay.webhooks.on(undefined as never, handler), 'type', /got undefined/);
    refusal(() => pay.webhooks.on('payment.succeeded', undefined as never), 'handler', /webhooks\.on takes a function as its handler, got undefined: pass the function itself, such as webhooks\.on\('payment\.succeeded', async \(event\) => \{ \.\.\. \}\)/);
    refusal(() => pay.webhooks.on('x', 'handler' as never), 'handler', /got a string/);
    refusal(() => pay.webhooks.onAny(undefined as never), 'handler', /webhooks\.onAny takes a function/);
    refusal(() => pay.webhooks.onError({} as never), 'handler', /webhooks\.onError takes a function as its handler, got an object/);
  });

  it('an event with no handler is still acknowledged and deduplicated', async () => {
    const { pay } = payWithClock();
    const d = delivery(paid);
    expect((await post(pay, d)).json).toEqual({ received: true });
    expect((await post(pay, d)).json).toEqual({ received: true, duplicate: true });
  });
});
