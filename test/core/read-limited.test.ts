/**
 * readLimited (src/core/read-limited.ts): a web stream's bytes, joined, or the caller's error once past the
 * limit. A pure function of a ReadableStream, so it is tested on streams built here, each counting its
 * pulls and whether it was cancelled (highWaterMark 0: a chunk is produced only when read).
 */
import { describe, expect, it } from 'vitest';
import { readLimited } from '../../src/core/read-limited.js';
import { recordUnhandledRejections } from '../helpers/unhandled-rejections.js';
import { eventually } from '../helpers/eventually.js';

class TooLarge extends Error {}

/** A stream of `chunks`, then the end (or `failWith`), that records what the reader did to it. */
function source(chunks: Uint8Array[], options: { failWith?: Error } = {}) {
  const queue = [...chunks];
  const seen = { pulls: 0, cancelled: false, cancelReason: undefined as unknown, finished: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.pulls += 1;
      const next = queue.shift();
      if (next) controller.enqueue(next);
      else if (options.failWith) {
        seen.finished = true;
        controller.error(options.failWith);
      } else {
        seen.finished = true;
        controller.close();
      }
    },
    cancel(reason) {
      seen.cancelled = true;
      seen.cancelReason = reason;
    },
  }, { highWaterMark: 0 });
  return { stream, seen };
}

const bytes = (...values: number[]) => new Uint8Array(values);

const never = () => new TooLarge('not expected');

describe('readLimited: within the limit', () => {
  it('no stream is an empty body', async () => {
    const body = await readLimited(null, 10, never);
    expect(body).toBeInstanceOf(Uint8Array);
    expect(body.byteLength).toBe(0);
  });

  it('an empty stream is an empty body, read to its end', async () => {
    const { stream, seen } = source([]);
    const body = await readLimited(stream, 10, never);
    expect(body).toEqual(new Uint8Array(0));
    expect(seen).toMatchObject({ pulls: 1, finished: true, cancelled: false });
  });

  it('gives one chunk back as it is (the same object, no copy)', async () => {
    const only = bytes(1, 2, 3);
    const { stream } = source([only]);
    expect(await readLimited(stream, 10, never)).toBe(only);
  });

  it('joins several chunks in order into one of the exact length', async () => {
    const { stream, seen } = source([bytes(1, 2), bytes(), bytes(3), bytes(4, 5, 6)]);
    const body = await readLimited(stream, 10, never);
    expect(Array.from(body)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(body.byteLength).toBe(6);
    expect(seen).toMatchObject({ pulls: 5, finished: true, cancelled: false });
  });

  it('joins chunks that are views into larger buffers by their own bytes only', async () => {
    const big = bytes(9, 9, 1, 2, 9, 9, 3, 4, 9);
    const { stream } = source([big.subarray(2, 4), big.subarray(6, 8)]);
    expect(Array.from(await readLimited(stream, 4, never))).toEqual([1, 2, 3, 4]);
  });

  it('accepts a body of exactly the limit', async () => {
    const { stream } = source([bytes(1, 2), bytes(3, 4)]);
    expect(Array.from(await readLimited(stream, 4, never))).toEqual([1, 2, 3, 4]);
  });

  it('a limit of 0 takes an empty body only', async () => {
    expect((await readLimited(source([]).stream, 0, never)).byteLength).toBe(0);
    const tooLarge = new TooLarge('over 0');
    await expect(readLimited(source([bytes(1)]).stream, 0, () => tooLarge)).rejects.toBe(tooLarge);
  });
});

describe('readLimited: past the limit', () => {
  it('fails with the caller\'s error on the chunk that crosses it, and cancels the stream (an upstream answer)', async () => {
    const tooLarge = new TooLarge('body over 4 bytes');
    let calls = 0;
    const { stream, seen } = source([bytes(1, 2, 3), bytes(4, 5), bytes(6), bytes(7)]);
    await expect(readLimited(stream, 4, () => (calls += 1, tooLarge))).rejects.toBe(tooLarge);
    expect(calls).toBe(1);
    // Stopped at the second chunk: nothing past it was read, and the stream was told so.
    expect(seen).toMatchObject({ pulls: 2, cancelled: true, finished: false });
  });

  it('drainPastLimit: fails at once, but reads the rest in the background instead of cancelling (a request body)', async () => {
    const tooLarge = new TooLarge('body over 4 bytes');
    const { stream, seen } = source([bytes(1, 2, 3), bytes(4, 5), bytes(6), bytes(7)]);
    await expect(readLimited(stream, 4, () => tooLarge, { drainPastLimit: true })).rejects.toBe(tooLarge);
    await eventually(() => seen.finished, 10_000, 'the stream to be drained to its end');
    // Every chunk was read (4) and the end too (1): the connection is left ready for its next request.
    expect(seen).toMatchObject({ pulls: 5, cancelled: false, finished: true });
  });

  describe('drainPastLimit, when the client goes away mid-drain', () => {
    it('still fails with the caller\'s error, and the stream\'s error escapes nowhere', async () => {
      const rejections = recordUnhandledRejections();
      const tooLarge = new TooLarge('body over 1 byte');
      const gone = new Error('aborted: the client went away');
      const { stream, seen } = source([bytes(1, 2), bytes(3)], { failWith: gone });
      await expect(readLimited(stream, 1, () => tooLarge, { drainPastLimit: true })).rejects.toBe(tooLarge);
      await eventually(() => seen.finished, 10_000, 'the stream to fail while being drained');
      expect(await rejections.escaped()).toEqual([]);
      expect(seen).toMatchObject({ pulls: 3, cancelled: false });
    });
  });
});

describe('readLimited: a stream that fails', () => {
  it('rejects with the stream\'s own error, not the too-large one', async () => {
    const broken = new Error('socket hang up');
    const { stream } = source([bytes(1)], { failWith: broken });
    await expect(readLimited(stream, 10, never)).rejects.toBe(broken);
  });
});
