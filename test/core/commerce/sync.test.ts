import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryCheckpointStore, type CommerceOrder, type OrderSyncProgress } from 'paywidget-server';
import type { Sandbox } from 'paywidget-server/sandbox';
import { captureLogger } from '../../helpers/capture-logger.js';
import { commerceSandbox, payFor, range, rejection } from './helpers.js';

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const noDuplicates = (ids: number[]) => expect(new Set(ids).size).toBe(ids.length);

describe('orders.sync', () => {
  it('delivers every order once, in order, with progress and a summary', async () => {
    sb = await commerceSandbox({ orders: 620 });
    const delivered: number[] = [];
    const progress: OrderSyncProgress[] = [];
    // What onOrder answers is awaited and ignored, as a database upsert's result would be (tsc checks it is allowed).
    const summary = await payFor(sb).orders.sync({ checkpoint: 'all', pageSize: 100, onOrder: async (o) => delivered.push(o.entity_id), onProgress: (p) => progress.push(p) });
    expect(delivered).toEqual(range(1, 620));
    expect(summary).toMatchObject({ delivered: 620, total: 620, lastEntityId: 620, complete: true, pages: 7, resumedFrom: undefined });
    expect(summary.ratePerSecond).toBeGreaterThan(0);
    expect(progress.map((p) => p.delivered)).toEqual([100, 200, 300, 400, 500, 600, 620]);
    expect(progress.every((p) => p.total === 620)).toBe(true);
  });

  it('resumes after a crash with every order delivered (at least once, never twice in one run)', async () => {
    sb = await commerceSandbox({ orders: 450 });
    const checkpoints = new MemoryCheckpointStore();
    const logger = captureLogger();
    const pay = payFor(sb, { stores: { checkpoints }, logger });
    const first: number[] = [];
    const crash = new Error('disk full');
    const error = await pay.orders.sync({
      checkpoint: 'nightly', pageSize: 100,
      onOrder: (o) => {
        if (o.entity_id === 237) throw crash;
        first.push(o.entity_id);
      },
    }).catch((e: unknown) => e);
    expect(error).toBe(crash);
    expect(first).toEqual(range(1, 236));
    expect(JSON.parse((await checkpoints.get('nightly'))!)).toMatchObject({ lastEntityId: 236, complete: false });

    // The log says why it stopped and where the next run resumes, for whoever reads it during the incident.
    const stopped = JSON.parse(logger.lines.find((l) => l.includes('order sync stopped'))!) as Record<string, unknown>;
    expect(stopped).toMatchObject({ level: 'warn', checkpoint: 'nightly', delivered: 236, resumesAfter: 236, err: { message: 'disk full' } });

    const second: number[] = [];
    const summary = await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'nightly', pageSize: 100, onOrder: (o) => void second.push(o.entity_id) });
    expect(second).toEqual(range(237, 450));
    expect(summary).toMatchObject({ resumedFrom: 236, delivered: 214, total: 214, complete: true });
    noDuplicates(second);
    expect(new Set([...first, ...second])).toEqual(new Set(range(1, 450)));
  });

  it('redelivers less than one page after a hard crash (the position is saved per page)', async () => {
    sb = await commerceSandbox({ orders: 300 });
    const checkpoints = new MemoryCheckpointStore();
    // The process dies at order 170: nothing it would still write lands.
    let alive = true;
    const dying = { get: (k: string) => checkpoints.get(k), set: async (k: string, v: string) => void (alive && (await checkpoints.set(k, v))) };
    const first: number[] = [];
    const killed = new Error('killed');
    await expect(payFor(sb, { stores: { checkpoints: dying } }).orders.sync({ checkpoint: 'c', pageSize: 50, onOrder: (o) => {
      if (o.entity_id === 170) {
        alive = false;
        throw killed;
      }
      first.push(o.entity_id);
    } })).rejects.toBe(killed);
    expect(first).toEqual(range(1, 169));
    const again: number[] = [];
    await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'c', pageSize: 50, onOrder: (o) => void again.push(o.entity_id) });
    expect(again).toEqual(range(151, 300)); // 151…169 twice, fewer than one page
    expect(new Set([...first, ...again])).toEqual(new Set(range(1, 300)));
  });

  it('survives a token that expires mid-sync: one refresh, nothing lost', async () => {
    sb = await commerceSandbox({ orders: 500 });
    const pay = payFor(sb);
    const delivered: number[] = [];
    await pay.orders.sync({ checkpoint: 'c', pageSize: 50, prefetch: 2, onOrder: (o) => {
      delivered.push(o.entity_id);
      if (o.entity_id === 180) sb!.commerce.expireTokens();
    } });
    expect(delivered).toEqual(range(1, 500));
    expect(sb.commerce.stats().tokenRequests).toBe(2);
    expect(sb.commerce.stats().unauthorized).toBeGreaterThanOrEqual(1);
  });

  it('retries a 5xx on one page, and copes with a page-size cap and the last page again', async () => {
    sb = await commerceSandbox({ orders: 333, maxPageSize: 60, lastPageAgain: true });
    const pay = payFor(sb);
    await pay.orders.get(1);
    sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 500, times: 1 });
    const delivered: number[] = [];
    const summary = await pay.orders.sync({ checkpoint: 'c', pageSize: 200, onOrder: (o) => void delivered.push(o.entity_id) });
    expect(delivered).toEqual(range(1, 333));
    expect(summary.pages).toBe(6);
  });

  it('is incremental: the next run delivers only orders added since', async () => {
    sb = await commerceSandbox({ orders: 120 });
    const pay = payFor(sb);
    let run: number[] = [];
    // settleMs 0: every order delivered moves the position (the default holds back orders under a minute old).
    const onOrder = (o: CommerceOrder) => void run.push(o.entity_id);
    await pay.orders.sync({ checkpoint: 'inc', onOrder, settleMs: 0 });
    expect(run).toHaveLength(120);
    const added = [sb.commerce.addOrder().entity_id, sb.commerce.addOrder().entity_id];
    run = [];
    const summary = await pay.orders.sync({ checkpoint: 'inc', onOrder, settleMs: 0 });
    expect(run).toEqual(added);
    expect(summary).toMatchObject({ resumedFrom: 120, delivered: 2, position: 122 });
    run = [];
    await pay.orders.sync({ checkpoint: 'inc', onOrder, settleMs: 0 });
    expect(run).toEqual([]);
  });

  it('keeps its position before orders under settleMs old, so a checkout that commits late is still delivered', async () => {
    sb = await commerceSandbox({ orders: 20 });
    const clock = { now: Date.now() };
    const pay = payFor(sb, { now: () => clock.now });
    let run: number[] = [];
    const sync = () => pay.orders.sync({ checkpoint: 'settle', onOrder: (o) => void run.push(o.entity_id) });
    await sync();
    expect(run).toEqual(range(1, 20)); // created in 2025: long settled

    // Magento gave 21 to a checkout still in its transaction; 22 committed first.
    const late = sb.commerce.addOrder({}, { committed: false }).entity_id;
    const early = sb.commerce.addOrder().entity_id;
    run = [];
    expect(await sync()).toMatchObject({ lastEntityId: early, position: 20 });
    expect(run).toEqual([early]);

    sb.commerce.commitOrder(late);
    run = [];
    expect(await sync()).toMatchObject({ position: 20 });
    expect(run).toEqual([late, early]); // 22 again: at least once, never twice in a run

    // A minute past the orders' creation by the sandbox's real clock, however long the runs above took
    // (61 s after the test's start left 1 s for them, which a loaded CI machine overran).
    clock.now = Date.now() + 61_000;
    run = [];
    expect(await sync()).toMatchObject({ position: early });
    expect(run).toEqual([late, early]);
    run = [];
    await sync();
    expect(run).toEqual([]);
    await expect(pay.orders.sync({ checkpoint: 'x', onOrder: () => {}, settleMs: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('counts an order stamped with the cutoff\'s own second as young: the platform keeps whole seconds, so it may be under settleMs old', async () => {
    sb = await commerceSandbox({ orders: 2 });
    // Created at 12:00:00.950, which the platform keeps as 12:00:00; the run comes 59.95 s later.
    const young = sb.commerce.addOrder({ created_at: '2030-01-01 12:00:00' }).entity_id;
    const sync = (at: number) => payFor(sb!, { now: () => at }).orders.sync({ checkpoint: 'second', settleMs: 60_000, onOrder: () => {} });
    expect(await sync(Date.UTC(2030, 0, 1, 12, 1, 0, 900))).toMatchObject({ lastEntityId: young, position: young - 1 });
    // A second later it is surely settled.
    expect(await sync(Date.UTC(2030, 0, 1, 12, 1, 1, 0))).toMatchObject({ position: young });
  });

  it('syncs by status and creation date, each checkpoint bound to its filter', async () => {
    sb = await commerceSandbox({ orders: 400 });
    const pay = payFor(sb);
    const from = sb.commerce.order(50)!.created_at as string;
    const to = sb.commerce.order(350)!.created_at as string;
    const expected = range(1, 400).filter((id) => {
      const o = sb!.commerce.order(id)!;
      return o.status === 'processing' && (o.created_at as string) >= from && (o.created_at as string) <= to;
    });
    const delivered: number[] = [];
    await pay.orders.sync({ checkpoint: 'processing', status: 'processing', createdFrom: from, createdTo: to, pageSize: 30, onOrder: (o) => void delivered.push(o.entity_id) });
    expect(delivered).toEqual(expected);
    const error = await rejection(pay.orders.sync({ checkpoint: 'processing', status: 'complete', onOrder: () => {} }));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain("Checkpoint 'processing' belongs to a sync with filter");
  });

  it('by status, delivers next time an order that entered the status after its position had passed it', async () => {
    let clock = Date.now();
    const now = () => clock;
    sb = await commerceSandbox({ orders: 300 }, now);
    const pay = payFor(sb, { now, stores: { checkpoints: new MemoryCheckpointStore() } });
    const processing = () => range(1, sb!.commerce.orderCount).filter((id) => sb!.commerce.order(id)!.status === 'processing');
    const run = async () => {
      const delivered: number[] = [];
      const summary = await pay.orders.sync({ checkpoint: 'paid', status: 'processing', pageSize: 40, onOrder: (o) => void delivered.push(o.entity_id) });
      expect(summary.complete).toBe(true);
      return delivered;
    };
    expect(await run()).toEqual(processing());

    // An order placed long ago is paid now, another is placed and paid: the next run has both, and only them.
    clock += 10 * 60_000;
    const paidLate = range(1, 300).find((id) => sb!.commerce.order(id)!.status === 'pending')!;
    sb.commerce.setOrder(paidLate, { state: 'processing', status: 'processing' });
    clock += 10 * 60_000;
    const placed = sb.commerce.addOrder({ state: 'processing', status: 'processing' }).entity_id;
    clock += 10 * 60_000;
    expect(await run()).toEqual([paidLate, placed]);

    clock += 10 * 60_000;
    expect(await run()).toEqual([]);
    // Stopped part-way, a run resumes with what it was reading: changes since the run before it.
    const changed = processing().slice(0, 3);
    for (const id of changed) sb.commerce.setOrder(id, { customer_note: 'gift wrap' });
    clock += 10 * 60_000;
    const stop = new AbortController();
    const first: number[] = [];
    const stopped = await pay.orders.sync({ checkpoint: 'paid', status: 'processing', pageSize: 1, prefetch: 1, signal: stop.signal, onOrder: (o) => {
      first.push(o.entity_id);
      stop.abort();
    } });
    expect(stopped.complete).toBe(false);
    expect([...first, ...(await run())]).toEqual(changed);
  });

  it('by status, with settleMs 0, still reads changes from a minute before its start: a change the platform stamped earlier than it committed', async () => {
    let clock = Date.now();
    sb = await commerceSandbox({ orders: 100 }, () => clock);
    const pay = payFor(sb, { now: () => clock, stores: { checkpoints: new MemoryCheckpointStore() } });
    const run = async () => {
      const delivered: number[] = [];
      await pay.orders.sync({ checkpoint: 'paid', status: 'processing', settleMs: 0, onOrder: (o) => void delivered.push(o.entity_id) });
      return delivered;
    };
    await run();
    // Paid during that run, stamped 30 s before it began (a clock behind, a commit that came late), not seen by it.
    const paidLate = range(1, 100).find((id) => sb!.commerce.order(id)!.status === 'pending')!;
    clock -= 30_000;
    sb.commerce.setOrder(paidLate, { state: 'processing', status: 'processing' });
    clock += 10 * 60_000;
    expect(await run()).toEqual([paidLate]);
  });

  it('takes one status, alone or repeated in an array, as the same filter: a checkpoint saved with one resumes with the others', async () => {
    sb = await commerceSandbox({ orders: 60 });
    const pay = payFor(sb);
    const first = await pay.orders.sync({ checkpoint: 'pending', status: 'pending', onOrder: () => {} });
    for (const status of [['pending'], ['pending', 'pending']]) {
      const again = await pay.orders.sync({ checkpoint: 'pending', status, onOrder: () => {} });
      expect(again.complete).toBe(true);
      expect(again.position).toBe(first.position);
    }
  });

  it('delivers and saves the orders before one it cannot use, and resumes at that one once it is fixed', async () => {
    sb = await commerceSandbox({ orders: 300 });
    sb.commerce.setOrder(130, { grand_total: '19.99' as never });
    const pay = payFor(sb, { stores: { checkpoints: new MemoryCheckpointStore() } });
    const delivered: number[] = [];
    const run = () => pay.orders.sync({ checkpoint: 'nightly', pageSize: 100, settleMs: 0, onOrder: (o) => void delivered.push(o.entity_id) });
    const error = await rejection(run());
    expect(error.code).toBe('UPSTREAM_INVALID_RESPONSE');
    expect(error.message).toContain('entity_id 130');
    expect(delivered).toEqual(range(1, 129));

    sb.commerce.setOrder(130, { grand_total: 19.99 });
    expect(await run()).toMatchObject({ resumedFrom: 129, delivered: 171, complete: true });
    expect(delivered).toEqual(range(1, 300));
  });

  it('stops on abort, saves its position, and continues next time', async () => {
    sb = await commerceSandbox({ orders: 300 });
    const checkpoints = new MemoryCheckpointStore();
    const pay = payFor(sb, { stores: { checkpoints } });
    const controller = new AbortController();
    const first: number[] = [];
    const stopped = await pay.orders.sync({ checkpoint: 'c', pageSize: 40, signal: controller.signal, onOrder: (o) => {
      first.push(o.entity_id);
      if (o.entity_id === 77) controller.abort();
    } });
    expect(stopped).toMatchObject({ complete: false, delivered: 77, lastEntityId: 77 });
    const rest: number[] = [];
    await pay.orders.sync({ checkpoint: 'c', pageSize: 40, onOrder: (o) => void rest.push(o.entity_id) });
    expect([...first, ...rest]).toEqual(range(1, 300));
  });

  it('stopped before its first order, or after a page it saved, writes nothing more: the checkpoint stays as it was', async () => {
    sb = await commerceSandbox({ orders: 100 });
    const checkpoints = new MemoryCheckpointStore();
    const writes: string[] = [];
    const set = checkpoints.set.bind(checkpoints);
    checkpoints.set = async (key, value) => {
      writes.push(value);
      await set(key, value);
    };
    const pay = payFor(sb, { stores: { checkpoints } });
    const stopped = await pay.orders.sync({ checkpoint: 'c', pageSize: 20, signal: AbortSignal.abort(), onOrder: () => {} });
    expect(stopped).toMatchObject({ complete: false, delivered: 0 });
    expect([writes, await checkpoints.get('c')]).toEqual([[], undefined]);
    // Stopped at the first order of its second page: the first page's save is the last.
    const controller = new AbortController();
    await pay.orders.sync({ checkpoint: 'c', pageSize: 20, signal: controller.signal, onOrder: (o) => void (o.entity_id === 20 && controller.abort()) });
    expect(writes.map((w) => JSON.parse(w) as { lastEntityId: number })).toEqual([expect.objectContaining({ lastEntityId: 20, complete: false })]);
  });

  it('rejects with the error of onOrder even when the signal was aborted before it failed', async () => {
    sb = await commerceSandbox({ orders: 100 });
    const checkpoints = new MemoryCheckpointStore();
    const controller = new AbortController();
    const crash = new Error('output closed');
    // As the CLI does when its output fails: the run is stopped, then onOrder rejects with the reason.
    const error = await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'c', pageSize: 20, signal: controller.signal, onOrder: async (o) => {
      if (o.entity_id === 45) {
        controller.abort();
        throw crash;
      }
    } }).then(() => undefined, (e: unknown) => e);
    expect(error).toBe(crash);
    expect(JSON.parse((await checkpoints.get('c'))!)).toMatchObject({ lastEntityId: 44, complete: false });
  });

  it('a synchronous onOrder (returning a non-thenable) gets every matching order in entity_id order', async () => {
    sb = await commerceSandbox({ orders: 260 });
    // A status filter leaves gaps in the ids, so "in order" is more than counting up.
    const expected = range(1, 260).filter((id) => sb!.commerce.order(id)!.status === 'processing');
    const delivered: number[] = [];
    // Returns a number, as a careless `o => list.push(o)` does: nothing to await, nothing to call.
    const onOrder = ((o: CommerceOrder) => delivered.push(o.entity_id)) as (o: CommerceOrder) => void;
    const summary = await payFor(sb).orders.sync({ checkpoint: 'sync-fn', status: 'processing', pageSize: 25, prefetch: 3, onOrder });
    expect(delivered).toEqual(expected);
    expect(summary).toMatchObject({ delivered: expected.length, lastEntityId: expected.at(-1), complete: true });
  });

  it('awaits a thenable that is not a Promise: the next order waits until it resolves', async () => {
    sb = await commerceSandbox({ orders: 30 });
    const events: string[] = [];
    const summary = await payFor(sb).orders.sync({ checkpoint: 'thenable', pageSize: 10, onOrder: (o) => {
      events.push(`start ${o.entity_id}`);
      const later = { then(resolve: () => void) {
        setTimeout(() => {
          events.push(`done ${o.entity_id}`);
          resolve();
        }, 2);
      } };
      return later as unknown as Promise<void>; // typed as the Promise it imitates
    } });
    // Not awaited, the starts would run ahead of the dones.
    expect(events).toEqual(range(1, 30).flatMap((id) => [`start ${id}`, `done ${id}`]));
    expect(summary).toMatchObject({ delivered: 30, complete: true });
  });

  it.each([
    [1, undefined], // nothing delivered: nothing saved
    [41, 40], // first order of a page: the previous page's position stands
    [57, 56], // mid-page: the position is saved up to the order before
  ])('a synchronous throw at order %i rejects with that error; the checkpoint holds %s and a rerun resumes after it', async (throwAt, saved) => {
    sb = await commerceSandbox({ orders: 90 });
    const checkpoints = new MemoryCheckpointStore();
    const crash = new Error(`onOrder failed at ${throwAt}`);
    const first: number[] = [];
    const error = await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'c', pageSize: 20, onOrder: (o) => {
      if (o.entity_id === throwAt) throw crash;
      first.push(o.entity_id);
    } }).then(() => undefined, (e: unknown) => e);
    expect(error).toBe(crash);
    expect(first).toEqual(range(1, throwAt - 1));
    const raw = await checkpoints.get('c');
    expect(raw === undefined ? undefined : (JSON.parse(raw) as { lastEntityId: number }).lastEntityId).toBe(saved);
    const rest: number[] = [];
    await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'c', pageSize: 20, onOrder: (o) => void rest.push(o.entity_id) });
    expect(rest).toEqual(range(throwAt, 90));
  });

  it('runs one sync per checkpoint at a time: an overlapping run is refused (409) and delivers nothing', async () => {
    sb = await commerceSandbox({ orders: 300 });
    const pay = payFor(sb);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const first: number[] = [];
    const running = pay.orders.sync({ checkpoint: 'nightly', pageSize: 100, onOrder: async (o) => {
      if (o.entity_id === 150) {
        reached();
        await gate;
      }
      first.push(o.entity_id);
    } });
    await atGate;
    const second: number[] = [];
    const refused = await rejection(pay.orders.sync({ checkpoint: 'nightly', onOrder: (o) => void second.push(o.entity_id) }));
    expect(refused).toMatchObject({ code: 'SYNC_IN_PROGRESS', status: 409, details: { checkpoint: 'nightly' } });
    expect(refused.message).toContain('Let it finish, or use another checkpoint name');
    expect(second).toEqual([]);
    // Another checkpoint is free meanwhile.
    expect(await pay.orders.sync({ checkpoint: 'other', pageSize: 100, onOrder: () => {} })).toMatchObject({ delivered: 300 });
    open();
    expect(await running).toMatchObject({ delivered: 300, complete: true });
    expect(first).toEqual(range(1, 300));
    // Freed when the run ended: the next one starts, with nothing new to deliver.
    expect(await pay.orders.sync({ checkpoint: 'nightly', onOrder: () => {} })).toMatchObject({ delivered: 0, resumedFrom: 300, complete: true });
  });

  it('goes on after stalling past its hold when no other run took the checkpoint', async () => {
    sb = await commerceSandbox({ orders: 120 });
    let now = 1_700_000_000_000;
    const checkpoints = new MemoryCheckpointStore({ now: () => now });
    const summary = await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: (o) => {
      if (o.entity_id === 30) now += 31_000;
    } });
    expect(summary).toMatchObject({ delivered: 120, complete: true });
    expect(JSON.parse((await checkpoints.get('nightly'))!)).toMatchObject({ lastEntityId: 120, complete: true });
  });

  it('stops without saving when its hold ran out and another run took the checkpoint', async () => {
    sb = await commerceSandbox({ orders: 200 });
    let now = 1_700_000_000_000;
    const checkpoints = new MemoryCheckpointStore({ now: () => now });
    let taken: string | undefined;
    const error = await rejection(payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: async (o) => {
      if (o.entity_id === 30) {
        // This run stalled past its hold: another one took the checkpoint and saved its own position.
        now += 31_000;
        taken = await checkpoints.acquireLock('nightly', 30_000);
        await checkpoints.set('nightly', 'the other run');
      }
    } }));
    expect(taken).toEqual(expect.any(String));
    expect(error).toMatchObject({ code: 'SYNC_IN_PROGRESS', status: 409 });
    expect(error.message).toContain('lost its hold');
    expect(await checkpoints.get('nightly')).toBe('the other run');
    // The other run's lock is untouched by this one's release.
    expect(await checkpoints.acquireLock('nightly', 30_000)).toBeUndefined();
  });

  it('keeps its hold through an onOrder slower than the hold, renewing it meanwhile', async () => {
    sb = await commerceSandbox({ orders: 60 });
    let now = 1_700_000_000_000;
    const checkpoints = new MemoryCheckpointStore({ now: () => now });
    let taken: string | undefined = 'not tried';
    // Only the renewal timer's interval is faked: the HTTP underneath keeps its real timers.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const summary = await payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: async (o) => {
        if (o.entity_id !== 30) return;
        // 45 s in one order, well past the 30 s hold, in steps the renewal timer sees.
        for (let step = 0; step < 9; step++) {
          now += 5_000;
          vi.advanceTimersByTime(5_000);
          await new Promise((resolve) => setImmediate(resolve));
        }
        taken = await checkpoints.acquireLock('nightly', 30_000);
      } });
      expect(taken).toBeUndefined();
      expect(summary).toMatchObject({ delivered: 60, complete: true });
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops without saving when its hold ran out and another run took the checkpoint but has saved nothing yet', async () => {
    sb = await commerceSandbox({ orders: 200 });
    let now = 1_700_000_000_000;
    const checkpoints = new MemoryCheckpointStore({ now: () => now });
    const error = await rejection(payFor(sb, { stores: { checkpoints } }).orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: async (o) => {
      if (o.entity_id === 30) {
        now += 31_000;
        expect(await checkpoints.acquireLock('nightly', 30_000)).toEqual(expect.any(String));
      }
    } }));
    // Only the refused renewal tells: the checkpoint holds nothing another run's save would have replaced.
    expect(error).toMatchObject({ code: 'SYNC_IN_PROGRESS', message: expect.stringContaining('lost its hold') });
    expect(await checkpoints.get('nightly')).toBeUndefined();
  });

  it('stops at its next save when, stalled past its hold, another run took the checkpoint, finished and freed it', async () => {
    sb = await commerceSandbox({ orders: 200 });
    let now = 1_700_000_000_000;
    const checkpoints = new MemoryCheckpointStore({ now: () => now });
    const pay = payFor(sb, { stores: { checkpoints } });
    const stalled: number[] = [];
    let other: { delivered: number } | undefined;
    const error = await rejection(pay.orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: async (o) => {
      stalled.push(o.entity_id);
      if (o.entity_id === 30) {
        now += 31_000;
        other = await pay.orders.sync({ checkpoint: 'nightly', pageSize: 50, onOrder: () => {} });
      }
    } }));
    expect(other).toMatchObject({ delivered: 200, complete: true });
    // The lock was free again when this run renewed it; the position the other run saved tells it lost.
    expect(error).toMatchObject({ code: 'SYNC_IN_PROGRESS', status: 409 });
    expect(stalled).toEqual(range(1, 50));
    expect(JSON.parse((await checkpoints.get('nightly'))!)).toMatchObject({ lastEntityId: 200, complete: true });
  });

  it('refuses bad options and a checkpoint value it did not write', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const checkpoints = new MemoryCheckpointStore();
    await checkpoints.set('junk', 'not json');
    const pay = payFor(sb, { stores: { checkpoints } });
    expect((await rejection(pay.orders.sync({ checkpoint: '', onOrder: () => {} }))).details).toEqual({ field: 'checkpoint' });
    expect((await rejection(pay.orders.sync({ checkpoint: 'x' } as never))).details).toEqual({ field: 'onOrder' });
    expect((await rejection(pay.orders.sync({ checkpoint: 'junk', onOrder: () => {} }))).message).toContain('did not write');
  });

  it('refuses a checkpoint value that is JSON of the wrong shape (edited by hand, damaged), naming the field, instead of half-using it', async () => {
    sb = await commerceSandbox({ orders: 5 });
    const checkpoints = new MemoryCheckpointStore();
    const pay = payFor(sb, { stores: { checkpoints } });
    await pay.orders.sync({ checkpoint: 'good', onOrder: () => {} });
    const good = JSON.parse((await checkpoints.get('good'))!) as Record<string, unknown>;
    const damaged = {
      'filter-null': { ...good, filter: null },
      'negative-position': { ...good, lastEntityId: -3 },
      'count-as-text': { ...good, delivered: '5' }, // was concatenated: "5" + 5 saved as "55"
      'start-not-a-time': { ...good, filter: { status: 'pending' }, startedAt: 'yesterday' },
    };
    for (const [name, value] of Object.entries(damaged)) {
      await checkpoints.set(name, JSON.stringify(value));
      const error = await rejection(pay.orders.sync({ checkpoint: name, ...(name === 'start-not-a-time' ? { status: 'pending' } : {}), onOrder: () => {} }));
      expect([name, error.code, error.details]).toEqual([name, 'INVALID_INPUT', { field: 'checkpoint' }]);
      expect(error.message).toContain(`Checkpoint '${name}' holds a value the order sync did not write (`);
    }
  });

  it('refuses to resume a checkpoint saved by a sync of another platform (COMMERCE_URL changed): its position would skip this one\'s orders', async () => {
    sb = await commerceSandbox({ orders: 20 });
    const staging = new MemoryCheckpointStore();
    await payFor(sb, { stores: { checkpoints: staging } }).orders.sync({ checkpoint: 'nightly', onOrder: () => {} });
    const saved = (await staging.get('nightly'))!;
    expect(JSON.parse(saved)).toMatchObject({ source: sb.commerceUrl, lastEntityId: 20 });

    const production = await commerceSandbox({ orders: 30 });
    try {
      // The next deploy, pointed at production, with the same shared store (Redis) holding staging's position.
      const checkpoints = new MemoryCheckpointStore();
      await checkpoints.set('nightly', saved);
      const pay = payFor(production, { stores: { checkpoints } });
      const error = await rejection(pay.orders.sync({ checkpoint: 'nightly', onOrder: () => {} }));
      expect(error).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'checkpoint', reason: 'other_source', source: sb.commerceUrl } });
      expect(error.message).toContain(`holds the position of a sync of ${sb.commerceUrl}, not ${production.commerceUrl}: resuming it would skip this platform's orders up to entity_id 20`);

      // One saved by a version that kept the URL as written (HTTP://127.0.0.1:…) is this platform's all the same.
      const shouted = JSON.stringify({ ...(JSON.parse(saved) as Record<string, unknown>), source: production.commerceUrl.replace('http://', 'HTTP://') });
      await checkpoints.set('shouted', shouted);
      const resumed: number[] = [];
      expect(await pay.orders.sync({ checkpoint: 'shouted', onOrder: (o) => void resumed.push(o.entity_id) })).toMatchObject({ resumedFrom: 20 });
      expect(resumed).toEqual(range(21, 30));

      // A checkpoint saved before the source was kept resumes, and keeps it from then on.
      const { source: _, ...older } = JSON.parse(saved) as Record<string, unknown>;
      await checkpoints.set('older', JSON.stringify(older));
      const delivered: number[] = [];
      expect(await pay.orders.sync({ checkpoint: 'older', onOrder: (o) => void delivered.push(o.entity_id) })).toMatchObject({ resumedFrom: 20 });
      expect(delivered).toEqual(range(21, 30));
      expect(JSON.parse((await checkpoints.get('older'))!)).toMatchObject({ source: production.commerceUrl });
    } finally {
      await production.close();
    }
  });
});
