import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateOrder } from '../../src/sandbox/commerce/generate.js';

describe('commerce sandbox: the order generator', () => {
  it('builds byte-identical orders to the generator before it was rewritten for speed (golden hash)', () => {
    // Key order counts: JSON.stringify keeps insertion order, and clients and fixtures see those bytes.
    // Change the hash only when the orders are meant to change.
    const hash = createHash('sha256');
    for (let id = 1; id <= 120; id++) {
      for (let stateIndex = 0; stateIndex <= 2; stateIndex++) {
        for (let currencyIndex = 0; currencyIndex <= 3; currencyIndex++) {
          hash.update(`${JSON.stringify(generateOrder(42, { id, created: '2024-03-05 10:20:30', stateIndex, currencyIndex }))}\n`);
        }
      }
    }
    expect(hash.digest('hex')).toBe('def8f6eff78cd392ac3f2e92e041580c8d5ba6c5c488d1dc85def5a1234f0874');
  });
});
