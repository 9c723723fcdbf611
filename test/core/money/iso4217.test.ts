import { readFileSync } from 'node:fs';
import { code as lookup, data } from 'currency-codes';
import { describe, expect, it } from 'vitest';
import { ADDED_SINCE, buildExponentTable, renderIso4217Module } from '../../../scripts/generate-iso4217.js';
import { CURRENCY_EXPONENTS } from '../../../src/core/money/index.js';

const REGENERATE = 'stale table: run `npx tsx scripts/generate-iso4217.ts`';

describe('CURRENCY_EXPONENTS', () => {
  it('equals what currency-codes says today', () => {
    expect(CURRENCY_EXPONENTS, REGENERATE).toEqual(buildExponentTable());
  });

  it('is byte for byte what the generator writes (header and package version included)', () => {
    const onDisk = readFileSync(new URL('../../../src/core/money/iso4217.ts', import.meta.url), 'utf8');
    expect(onDisk, REGENERATE).toBe(renderIso4217Module());
  });

  it('agrees with currency-codes lookups for every code it lists but those ISO added since its list', () => {
    for (const [code, digits] of Object.entries(CURRENCY_EXPONENTS)) {
      expect(lookup(code)?.digits ?? ADDED_SINCE[code], code).toBe(digits);
    }
  });

  it('leaves out only the ISO "N.A." units (metals, funds, XXX), which currency-codes reports as 0', () => {
    const left = data.map((c) => c.code).filter((c) => !Object.hasOwn(CURRENCY_EXPONENTS, c));
    expect(left.sort()).toEqual(['XAG', 'XAU', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XPD', 'XPT', 'XSU', 'XTS', 'XUA', 'XXX']);
  });

  it.each([
    ['JPY', 0], ['ISK', 0], ['EUR', 2], ['USD', 2], ['KWD', 3], ['BHD', 3], ['CLF', 4], ['XCG', 2], ['ANG', 2],
  ])('%s has exponent %i', (code, digits) => {
    expect(CURRENCY_EXPONENTS[code]).toBe(digits);
  });

  it('is sorted and frozen', () => {
    const codes = Object.keys(CURRENCY_EXPONENTS);
    expect(codes).toEqual([...codes].sort());
    expect(Object.isFrozen(CURRENCY_EXPONENTS)).toBe(true);
  });
});
