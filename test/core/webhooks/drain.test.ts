/** pay.drain(): the claim writes retried in the background, waited for at shutdown. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createPay, MemoryClaimStore } from 'paywidget-server';
import { signWebhook } from 'paywidget-server/testing';
import { describe, expect, it } from 'vitest';
import { BackgroundWrites } from '../../../src/core/webhooks/background-writes.js';
import { captureLogger } from '../../helpers/capture-logger.js';
import { recordUnhandledRejections } from '../../helpers/unhandled-rejections.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('pay.drain()', () => {
  it('keeps a process with nothing else to do alive until the done mark retried in the background has landed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/core/webhooks/fixtures/drain-then-exit.ts'], { cwd: root, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toEqual({ status: 200, failedFirst: true, completed: true });
  });
});

/** A claim store whose complete fails once and then, on the retry, never answers (a hung connection). */
class CompleteHangsOnRetry extends MemoryClaimStore {
  calls = 0;
  override async complete(): Promise<boolean> {
    this.calls += 1;
    if (this.calls === 1) throw new Error('connection lost');
    return new Promise<boolean>(() => {}); // never settles
  }
}

async function deliverWith(claims: MemoryClaimStore, leaseMs: number) {
  const logger = captureLogger();
  const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 'whsec_drain' }, stores: { claims }, webhooks: { leaseMs }, logger });
  pay.webhooks.onAny(() => {});
  const signed = signWebhook({ payload: { id: `evt_${Math.random()}`, type: 'payment.failed', data: {} }, secret: 'whsec_drain' });
  const answer = await pay.handle({ method: 'POST', path: '/webhooks', headers: signed.headers, rawBody: signed.body });
  expect(answer?.status).toBe(200);
  return { pay, logger };
}

describe('pay.drain() with a store that hangs', () => {
  it('gives a retried write that never answers up at its lease\'s end, so the drain ends', async () => {
    const claims = new CompleteHangsOnRetry();
    const { pay, logger } = await deliverWith(claims, 1_000);
    const started = performance.now();
    await pay.drain();
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(claims.calls).toBe(2);
    expect(logger.text()).toContain('webhook claim could not complete before its lease ended; it expires with the lease');
    // Retried, the first failure is a warning; a completion that never landed, which lets a duplicate run again, an error.
    const levels = logger.lines.map((line) => JSON.parse(line) as { level: string; msg: string });
    expect(levels.find((line) => line.msg.startsWith('webhook claim store failed to complete'))?.level).toBe('warn');
    expect(levels.find((line) => line.msg.startsWith('webhook claim could not complete'))?.level).toBe('error');
  });

  it('resolves after { timeoutMs } with the write still pending, and refuses a timeout that is not a number', async () => {
    const { pay } = await deliverWith(new CompleteHangsOnRetry(), 60_000);
    const started = performance.now();
    await pay.drain({ timeoutMs: 300 });
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(290);
    expect(waited).toBeLessThan(5_000);
    await expect(pay.drain({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(pay.drain({ timeoutMs: '5s' as unknown as number })).rejects.toThrow('pay.drain({ timeoutMs }) takes a number of milliseconds (0 or more), got a string.');
  });
});

describe('BackgroundWrites.drain()', () => {
  it('after { timeoutMs } gave up, leaves the pending writes\' waits unable to hold a process that has nothing else to do', async () => {
    // In a process of its own: it must exit once the drain gave up, not when the write's 10 s wait ends.
    const script = `
      import { BackgroundWrites } from './src/core/webhooks/background-writes.ts';
      const writes = new BackgroundWrites(undefined, { debug() {}, info() {}, warn() {}, error() {} });
      writes.start(async (wait) => { await wait(10_000); });
      const started = performance.now();
      await writes.drain(100);
      process.on('exit', () => console.log(JSON.stringify({ exitedAfterMs: Math.round(performance.now() - started) })));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, timeout: 20_000 });
    expect(JSON.parse(stdout.trim()).exitedAfterMs).toBeLessThan(5_000);
  });


  it('waits for a write that started while it was draining (a delivery answered during shutdown)', async () => {
    const writes = new BackgroundWrites(undefined, captureLogger());
    const landed: string[] = [];
    writes.start(async (wait) => {
      await wait(50);
      landed.push('first');
    });
    const drained = writes.drain();
    await new Promise((resolve) => setTimeout(resolve, 20));
    writes.start(async (wait) => {
      await wait(100);
      landed.push('second');
    });
    await drained;
    expect(landed).toEqual(['first', 'second']);
  });
});

/** A claim store whose complete fails once (a store blip), then works. */
class CompleteFailsOnce extends MemoryClaimStore {
  calls = 0;
  override async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    this.calls += 1;
    if (this.calls === 1) throw new Error('connection lost');
    return super.complete(key, token, retentionMs);
  }
}

describe('webhooks.waitUntil (serverless functions, frozen once they answer)', () => {
  const options = (claims: MemoryClaimStore, waitUntil: unknown, logger = captureLogger()) => ({
    env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'k', webhookSecret: 'whsec_wait' }, stores: { claims }, webhooks: { leaseMs: 1_000, waitUntil: waitUntil as () => void }, logger,
  });

  it('hands the platform the done mark retried after the answer, so the function is kept alive until it lands', async () => {
    const claims = new CompleteFailsOnce();
    const kept: Promise<unknown>[] = [];
    const pay = createPay(options(claims, (work: Promise<unknown>) => kept.push(work)));
    let runs = 0;
    pay.webhooks.onAny(() => void (runs += 1));
    const signed = signWebhook({ payload: { id: 'evt_serverless', type: 'payment.failed', data: {} }, secret: 'whsec_wait' });
    const deliver = () => pay.handle({ method: 'POST', path: '/webhooks', headers: signed.headers, rawBody: signed.body });
    expect((await deliver())?.status).toBe(200);
    expect(kept).toHaveLength(1);
    await Promise.all(kept); // what the platform waits for before freezing the function
    expect(claims.calls).toBe(2);
    const duplicate = await deliver();
    expect(JSON.parse(duplicate!.body as string)).toMatchObject({ duplicate: true });
    expect(runs).toBe(1);
  });

  it('goes on without it when waitUntil throws (Next\'s after() outside a request), and refuses one that is not a function', async () => {
    const claims = new CompleteFailsOnce();
    const logger = captureLogger();
    const pay = createPay(options(claims, () => { throw new Error('after() was called outside a request scope'); }, logger));
    pay.webhooks.onAny(() => {});
    const signed = signWebhook({ payload: { id: 'evt_after', type: 'payment.failed', data: {} }, secret: 'whsec_wait' });
    expect((await pay.handle({ method: 'POST', path: '/webhooks', headers: signed.headers, rawBody: signed.body }))?.status).toBe(200);
    await pay.drain();
    expect(claims.calls).toBe(2);
    expect(logger.text()).toContain('webhooks.waitUntil threw; the claim write goes on without it');
    // An async waitUntil that rejects is caught too: unhandled, it would end the process.
    const escapes = recordUnhandledRejections();
    const asyncLogger = captureLogger();
    const asyncClaims = new CompleteFailsOnce();
    const asyncPay = createPay(options(asyncClaims, async () => { throw new Error('after() was called outside a request scope'); }, asyncLogger));
    asyncPay.webhooks.onAny(() => {});
    const again = signWebhook({ payload: { id: 'evt_after_async', type: 'payment.failed', data: {} }, secret: 'whsec_wait' });
    expect((await asyncPay.handle({ method: 'POST', path: '/webhooks', headers: again.headers, rawBody: again.body }))?.status).toBe(200);
    await asyncPay.drain();
    expect(await escapes.escaped()).toEqual([]);
    expect(asyncLogger.text()).toContain('webhooks.waitUntil threw; the claim write goes on without it');
    expect(() => createPay(options(new MemoryClaimStore(), 'waitUntil'))).toThrow("webhooks.waitUntil must be a function (work: Promise) => void, such as waitUntil from '@vercel/functions'");
  });
});
