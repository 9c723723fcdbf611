import { describe, expect, it } from 'vitest';
import { BodyBuffers, BodyWriter } from '../../../src/core/transport/body-buffers.js';

describe('BodyBuffers', () => {
  it('takes a new buffer with room to spare, and a given-back one again when it is large enough', () => {
    const bodies = new BodyBuffers();
    const first = bodies.take(500_000);
    expect(first.length).toBeGreaterThanOrEqual(500_000);
    bodies.give(first.subarray(0, 10));
    expect(bodies.take(first.length + 1).buffer).not.toBe(first.buffer);
    expect(bodies.take(400_000).buffer).toBe(first.buffer);
    expect(bodies.take(400_000).buffer).not.toBe(first.buffer); // taken: not handed out twice
  });

  it('hands out the largest buffer given back, so that an answer of unknown length seldom outgrows it', () => {
    const bodies = new BodyBuffers();
    const [small, large, middle] = [bodies.take(70_000), bodies.take(600_000), bodies.take(300_000)];
    for (const buffer of [small, large, middle]) bodies.give(buffer);
    expect(bodies.take(1).buffer).toBe(large.buffer);
    expect(bodies.take(1).buffer).toBe(middle.buffer);
  });

  it('ignores a buffer it did not give out, and one given back twice (two answers would share it)', () => {
    const bodies = new BodyBuffers();
    bodies.give(new Uint8Array(1_000_000));
    expect(bodies.take(10).length).toBeLessThan(1_000_000);
    const taken = bodies.take(100);
    bodies.give(taken);
    bodies.give(taken);
    expect(bodies.take(100).buffer).toBe(taken.buffer);
    expect(bodies.take(100).buffer).not.toBe(taken.buffer);
  });
});

describe('BodyWriter', () => {
  it('keeps every byte written across a buffer that fills, and gives the smaller one back', () => {
    const bodies = new BodyBuffers();
    const writer = new BodyWriter(bodies, Number.NaN);
    const chunks = Array.from({ length: 40 }, (_, i) => new Uint8Array(10_000).fill(i));
    for (const chunk of chunks) writer.write(chunk);
    const bytes = writer.bytes();
    expect(bytes.length).toBe(400_000);
    expect(chunks.every((chunk, i) => bytes.subarray(i * 10_000, (i + 1) * 10_000).every((b) => b === i))).toBe(true);
    expect(bodies.take(1).buffer).not.toBe(bytes.buffer); // a smaller one, given back as it grew
  });

  it('takes room for the declared length at once, and gives it back when the answer is discarded', () => {
    const bodies = new BodyBuffers();
    const writer = new BodyWriter(bodies, 300_000);
    writer.write(new Uint8Array(300_000));
    const { buffer } = writer.bytes();
    writer.discard();
    expect(bodies.take(300_000).buffer).toBe(buffer);
  });
});
