/**
 * Order paging where the edge runtime differs from Node (Next.js edge routes): setImmediate is defined there as a
 * stub that throws, and AbortSignal has no `any`. Each is made so here, around real HTTP to the sandbox.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { collect, commerceSandbox, payFor, range } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  await sb?.close();
  sb = undefined;
});

describe('orders.iterate on the edge runtime', () => {
  it('pages on where setImmediate is a stub that throws, as Next.js defines it there', async () => {
    sb = await commerceSandbox({ orders: 250 });
    const pay = payFor(sb);
    vi.stubGlobal('setImmediate', () => {
      throw new Error('A Node.js API is used (setImmediate) which is not supported in the Edge Runtime.');
    });
    const orders = await collect(pay.orders.iterate({ pageSize: 50 }));
    expect(orders.map((order) => order.entity_id)).toEqual(range(1, 250));
  });

  it('takes a signal without AbortSignal.any, stops with its reason, and leaves no listener on it', async () => {
    sb = await commerceSandbox({ orders: 250 });
    const pay = payFor(sb);
    vi.spyOn(AbortSignal, 'any').mockImplementation(() => {
      throw new TypeError('AbortSignal.any is not a function');
    });
    const controller = new AbortController();
    const added = vi.spyOn(controller.signal, 'addEventListener');
    const removed = vi.spyOn(controller.signal, 'removeEventListener');
    expect((await collect(pay.orders.iterate({ pageSize: 50, signal: controller.signal }))).length).toBe(250);
    // Unlinked once the run ended: a signal that lives as long as the app would otherwise gather one listener a run.
    expect(added.mock.calls.length).toBeGreaterThan(0);
    expect(removed.mock.calls.map(([type, listener]) => [type, listener])).toEqual(added.mock.calls.map(([type, listener]) => [type, listener]));

    const seen: number[] = [];
    const stopped = (async () => {
      for await (const order of pay.orders.iterate({ pageSize: 50, signal: controller.signal })) {
        seen.push(order.entity_id);
        if (seen.length === 60) controller.abort(new Error('stopped by the app'));
      }
    })();
    await expect(stopped).rejects.toThrow('stopped by the app');
    expect(seen.length).toBe(60);
  });
});
