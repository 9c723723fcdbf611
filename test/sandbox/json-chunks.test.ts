import { describe, expect, it } from 'vitest';
import { jsonChunks } from '../../src/sandbox/shared/json-chunks.js';

describe('jsonChunks', () => {
  it('writes exactly what JSON.stringify writes, whatever the fields', () => {
    const values: unknown[] = [
      {},
      { a: 1 },
      { items: [] },
      { items: [1, 'two', null, undefined, () => 3, { nested: [1, 2] }], total_count: 6 },
      { before: 'x', items: [{ id: 1 }], skipped: undefined, fn: () => 1, after: { at: new Date(0) } },
      { first: [1], second: [2, 3], last: 'z' },
      { quote: 'a"b\\c\u2028', emoji: '😀', key: { 'we"ird': true } },
      [1, 2, 3],
      'text',
      42,
      null,
      new Date(0),
    ];
    for (const value of values) expect(jsonChunks(value).join('')).toBe(JSON.stringify(value));
  });

  it('cuts a long array field into chunks of at most a few hundred KiB, none of them the whole answer', () => {
    const order = { entity_id: 1, note: 'x'.repeat(5_000) };
    const page = { items: Array.from({ length: 1_000 }, (_, i) => ({ ...order, entity_id: i + 1 })), total_count: 1_000 };
    const chunks = jsonChunks(page);
    expect(chunks.join('')).toBe(JSON.stringify(page));
    expect(chunks.length).toBeGreaterThan(50);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThan(80_000);
  });
});
