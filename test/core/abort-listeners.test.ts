/**
 * One caller's signal shared by many calls in flight (a shutdown signal) is no leak: like fetch, the library
 * raises Node's listener-leak warning limit on it, so Node 20 does not warn past 10 listeners.
 */
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from 'paywidget-server/sandbox';
import { sleep } from '../../src/core/sleep.js';
import { commerceSandbox, payFor, range } from './commerce/helpers.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await commerceSandbox({ orders: 30 });
});
afterAll(() => sb.close());

/** The MaxListenersExceededWarnings Node emits while `work` runs. */
async function leakWarnings(work: () => Promise<unknown>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning.message);
  };
  process.on('warning', onWarning);
  try {
    await work();
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  } finally {
    process.off('warning', onWarning);
  }
  return warnings;
}

describe('a signal shared by many calls in flight', () => {
  it('order reads and status polls: no listener-leak warning, and the signal still aborts them', async () => {
    const pay = payFor(sb);
    const shutdown = new AbortController();
    const ids = range(1, 30);
    expect(await leakWarnings(() => Promise.all(ids.map((id) => pay.orders.get(id, { signal: shutdown.signal }))))).toEqual([]);
    expect(await leakWarnings(() => Promise.allSettled(ids.map((id) => pay.payments.status(`pay_${id}`, { signal: shutdown.signal }))))).toEqual([]);
    const pending = ids.map((id) => pay.payments.status(`pay_${id}`, { signal: shutdown.signal }));
    shutdown.abort(new Error('shutting down'));
    for (const result of await Promise.allSettled(pending)) expect(result).toMatchObject({ status: 'rejected', reason: { message: 'shutting down' } });
  });

  it('waits between retries: no listener-leak warning; a limit the signal\'s owner set is kept', async () => {
    const shutdown = new AbortController();
    expect(await leakWarnings(() => Promise.all(range(1, 20).map(() => sleep(5, shutdown.signal))))).toEqual([]);
    const owned = new AbortController();
    EventEmitter.setMaxListeners(3, owned.signal);
    await sleep(1, owned.signal);
    expect(EventEmitter.getMaxListeners(owned.signal)).toBe(3);
  });
});
