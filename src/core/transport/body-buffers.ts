/**
 * Buffers that answers are read into, given back by the caller once it is done with the bytes, to be
 * filled again. An order sync reads one page of half a megabyte after another, each in memory outside
 * V8's heap; the pages that wait their turn in the prefetch queue grow old there, and old buffers are
 * freed only by a full collection, which V8 then runs for their sake alone, every few dozen pages.
 * Reused, there are about as many as pages in flight (bench/order-sync.ts measures the difference).
 */
export class BodyBuffers {
  readonly #free: ArrayBuffer[] = [];
  readonly #ours = new WeakSet<ArrayBuffer>();

  /**
   * Room for at least `bytes`: the largest buffer given back (an answer of unknown length, compressed or chunked,
   * then seldom outgrows it), or a new one with some to spare (the next page may be longer).
   */
  take(bytes: number): Uint8Array {
    let largest = -1;
    for (let i = 0; i < this.#free.length; i++) if (largest === -1 || this.#free[i]!.byteLength > this.#free[largest]!.byteLength) largest = i;
    if (largest !== -1 && this.#free[largest]!.byteLength >= bytes) return new Uint8Array(this.#free.splice(largest, 1)[0]!);
    const buffer = new ArrayBuffer(Math.ceil((bytes * 1.125) / SPARE_UNIT) * SPARE_UNIT || SPARE_UNIT);
    this.#ours.add(buffer);
    return new Uint8Array(buffer);
  }

  /**
   * Gives back the buffer under `bytes` (taken from here), to be filled again: nothing may read `bytes`
   * afterwards. Anything else is left to the garbage collector.
   */
  give(bytes: Uint8Array): void {
    const { buffer } = bytes;
    if (!(buffer instanceof ArrayBuffer) || !this.#ours.has(buffer) || this.#free.includes(buffer) || this.#free.length >= MAX_FREE) return;
    this.#free.push(buffer);
  }
}

const SPARE_UNIT = 64 * 1024;
/** More than a sync keeps in flight (16 pages at most, and the one being handed over). */
const MAX_FREE = 32;

/** An answer's bytes as they arrive, written into a buffer of `bodies` (a larger one when it fills). */
export class BodyWriter {
  #room: Uint8Array;
  #length = 0;

  /** `expected`: the length the answer declares, if any (room for up to 8 MiB is taken at once). */
  constructor(
    private readonly bodies: BodyBuffers,
    expected: number,
  ) {
    this.#room = bodies.take(Number.isSafeInteger(expected) && expected > 0 ? Math.min(expected, 8 * 2 ** 20) : SPARE_UNIT);
  }

  write(chunk: Uint8Array): void {
    const end = this.#length + chunk.length;
    if (end > this.#room.length) {
      const larger = this.bodies.take(Math.max(end, this.#room.length * 2));
      larger.set(this.#room.subarray(0, this.#length));
      this.bodies.give(this.#room);
      this.#room = larger;
    }
    this.#room.set(chunk, this.#length);
    this.#length = end;
  }

  /** What was written: a view of the buffer, which the caller gives back to `bodies` once done with it. */
  bytes(): Uint8Array {
    return this.#room.subarray(0, this.#length);
  }

  /** The answer will not be used: its buffer goes back at once (nothing may be written after). */
  discard(): void {
    this.bodies.give(this.#room);
  }
}
