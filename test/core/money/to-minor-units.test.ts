import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PayError } from '../../../src/core/errors.js';
import { currencyExponent, fromMinorUnits, isKnownCurrency, toMinorUnits } from '../../../src/core/money/index.js';

/** One currency per exponent, two where we have them: 0, 2, 3 and 4 digits. */
const CURRENCIES = ['JPY', 'ISK', 'EUR', 'USD', 'KWD', 'BHD', 'CLF'] as const;
const RUNS = { numRuns: 2000 };

function payErrorOf(fn: () => unknown): PayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PayError) return error;
    throw error;
  }
  throw new Error('expected a PayError, nothing was thrown');
}

function expectInvalid(fn: () => unknown, field: string, message?: string | RegExp): void {
  const error = payErrorOf(fn);
  expect(error.code).toBe('INVALID_INPUT');
  expect(error.details).toEqual({ field });
  if (message !== undefined) expect(error.message).toMatch(message);
}

describe('isKnownCurrency / currencyExponent', () => {
  it.each([['EUR', true, 2], ['JPY', true, 0], ['CLF', true, 4], ['eur', false, undefined], [' EUR', false, undefined],
    ['EURO', false, undefined], ['XAU', false, undefined], ['XXX', false, undefined], ['', false, undefined],
    ['toString', false, undefined], ['__proto__', false, undefined], ['constructor', false, undefined],
  ])('%j → %s, exponent %s', (code, known, exponent) => {
    expect(isKnownCurrency(code)).toBe(known);
    expect(currencyExponent(code)).toBe(exponent);
  });
});

describe('toMinorUnits', () => {
  // Classic float traps: 19.99 * 100 = 1998.9999999999998, 4.35 * 100 = 434.99999999999994,
  // 1.005 * 1000 = 1004.9999999999999; converting from the decimal string avoids all of them.
  it.each<[string | number, string, number]>([
    ['19.99', 'EUR', 1999], [19.99, 'EUR', 1999], ['0.3', 'EUR', 30], [0.3, 'USD', 30],
    ['4.35', 'USD', 435], [4.35, 'USD', 435], [1.15, 'EUR', 115], ['0.07', 'EUR', 7], [0.07, 'EUR', 7],
    ['1.005', 'KWD', 1005], [1.005, 'BHD', 1005], ['8.675', 'KWD', 8675], [8.675, 'BHD', 8675],
    [1.005, 'CLF', 10050], ['8.675', 'CLF', 86750], ['0.0001', 'CLF', 1], [4.35, 'CLF', 43500],
    ['100', 'JPY', 100], [100, 'ISK', 100], ['100.0', 'JPY', 100], ['100.000', 'ISK', 100],
    ['19.990', 'EUR', 1999], ['1.5', 'KWD', 1500], ['007.50', 'EUR', 750], ['0', 'EUR', 0], ['0.00', 'EUR', 0],
    [0, 'JPY', 0], [-0, 'EUR', 0], ['90071992547409.91', 'EUR', Number.MAX_SAFE_INTEGER],
    ['9007199254740991', 'JPY', Number.MAX_SAFE_INTEGER],
  ])('%j %s → %i', (value, currency, expected) => {
    expect(toMinorUnits(value, currency)).toBe(expected);
  });

  it.each<[unknown, string, string, RegExp]>([
    ['-1', 'EUR', 'amount', /negative/], [-1, 'EUR', 'amount', /negative/], ['-0', 'EUR', 'amount', /negative/],
    [NaN, 'EUR', 'amount', /NaN: pass a finite number/], [Infinity, 'EUR', 'amount', /finite/], [-Infinity, 'EUR', 'amount', /finite/],
    ['1e3', 'JPY', 'amount', /exponent notation/], ['1E3', 'JPY', 'amount', /exponent notation/],
    [1e21, 'JPY', 'amount', /no plain decimal form.*decimal string/], [1e-7, 'CLF', 'amount', /no plain decimal form/],
    ['', 'EUR', 'amount', /empty/],
    [' 19.99', 'EUR', 'amount', /whitespace: trim it/], ['19.99 ', 'EUR', 'amount', /whitespace/],
    ['19 .99', 'EUR', 'amount', /whitespace/], ['\t1', 'EUR', 'amount', /whitespace/], ['1\u00a0000', 'EUR', 'amount', /whitespace/],
    ['1,000.00', 'EUR', 'amount', /separator/], ['1_000', 'EUR', 'amount', /separator/],
    ["1'000", 'EUR', 'amount', /separator/], ['19,99', 'EUR', 'amount', /'\.' as the decimal point/],
    ['19.999', 'EUR', 'amount', /^amount '19\.999' has 3 decimal places but EUR has 2: round it before converting$/],
    [19.999, 'EUR', 'amount', /3 decimal places but EUR has 2/], ['100.5', 'JPY', 'amount', /1 decimal place but JPY has 0/],
    [1.005, 'EUR', 'amount', /3 decimal places/], [8.675, 'USD', 'amount', /3 decimal places/],
    [0.1 + 0.2, 'EUR', 'amount', /'0\.30000000000000004' has 17 decimal places/], ['0.0001', 'KWD', 'amount', /4 decimal places but KWD has 3/],
    ['1.00001', 'CLF', 'amount', /5 decimal places but CLF has 4/], ['19.9990', 'EUR', 'amount', /3 decimal places/],
    ['90071992547409.92', 'EUR', 'amount', /9007199254740992 minor units, more than/], ['9007199254740992', 'JPY', 'amount', /more than/],
    [1e20, 'EUR', 'amount', /more than/],
    // Past 15 significant digits a number may not be the decimal that was sent: 80000000000000.01 reads back as …02.
    [JSON.parse('80000000000000.01') as number, 'EUR', 'amount', /80000000000000\.02 EUR is 8000000000000002 minor units: more significant digits than a JavaScript number keeps exactly \(15\).*decimal string/],
    // …and 90071992547409.91 as 90071992547409.9: 15 digits that look exact, a cent short.
    [JSON.parse('90071992547409.91') as number, 'EUR', 'amount', /9007199254740990 minor units: more significant digits/],
    [JSON.parse('8796093022208.001') as number, 'KWD', 'amount', /more significant digits/], [1000000000000000, 'JPY', 'amount', /more significant digits/],
    ['.5', 'EUR', 'amount', /not a plain decimal/], ['5.', 'EUR', 'amount', /not a plain decimal/], ['+5', 'EUR', 'amount', /not a plain decimal/],
    ['abc', 'EUR', 'amount', /not a plain decimal/], ['1.2.3', 'EUR', 'amount', /not a plain decimal/],
    ['１２', 'JPY', 'amount', /not a plain decimal/], ['٣', 'JPY', 'amount', /not a plain decimal/], ['0x10', 'JPY', 'amount', /not a plain decimal/],
    [null, 'EUR', 'amount', /decimal string or a number, got object/], [undefined, 'EUR', 'amount', /got undefined/],
    ['1', 'eur', 'currency', /"eur" is not a known ISO 4217 currency: use 'EUR'/], ['1', 'XAU', 'currency', /such as 'EUR'/],
    ['1', 'XXX', 'currency', /not a known/], ['1', '', 'currency', /not a known/], ['1', 'toString', 'currency', /not a known/],
  ])('rejects %j %s (field %s)', (value, currency, field, message) => {
    expectInvalid(() => toMinorUnits(value as string, currency), field, message);
  });

  it('rejects other types from JavaScript callers', () => {
    expectInvalid(() => toMinorUnits(10n as unknown as number, 'EUR'), 'amount', /got bigint/);
    expectInvalid(() => toMinorUnits(['19.99'] as unknown as string, 'EUR'), 'amount', /got object/);
  });

  const digits = (minLength: number, maxLength: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength });
  const nonZeroDigit = fc.constantFrom(...'123456789');
  const currency = fc.constantFrom(...CURRENCIES);
  const exponentOf = (code: string) => currencyExponent(code) ?? Number.NaN;

  it('matches a BigInt string reference for any decimal within the exponent (trailing zeros allowed)', () => {
    const input = currency.chain((code) => fc.record({
      code: fc.constant(code),
      whole: digits(1, 17),
      fraction: digits(0, exponentOf(code)),
      zeros: fc.nat(3),
    }));
    fc.assert(fc.property(input, ({ code, whole, fraction, zeros }) => {
      const decimal = fraction.length + zeros > 0 ? `${whole}.${fraction}${'0'.repeat(zeros)}` : whole;
      const reference = BigInt(whole + fraction.padEnd(exponentOf(code), '0'));
      if (reference <= BigInt(Number.MAX_SAFE_INTEGER)) {
        expect(toMinorUnits(decimal, code)).toBe(Number(reference));
      } else {
        expectInvalid(() => toMinorUnits(decimal, code), 'amount', /more than a JavaScript number holds exactly/);
      }
    }), RUNS);
  });

  it('round-trips every safe integer through fromMinorUnits', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), currency, (minor, code) => {
      expect(toMinorUnits(fromMinorUnits(minor, code), code)).toBe(minor);
    }), RUNS);
  });

  it('converts numbers exactly whenever they have at most 15 significant digits', () => {
    // Up to 15 significant digits a decimal survives string → double → String() unchanged.
    fc.assert(fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), currency, (minor, code) => {
      expect(toMinorUnits(Number(fromMinorUnits(minor, code)), code)).toBe(minor);
    }), RUNS);
  });

  it('takes the decimal string of an amount a number cannot keep exactly', () => {
    expect(toMinorUnits('80000000000000.01', 'EUR')).toBe(8000000000000001);
    expect(toMinorUnits('8796093022208.001', 'KWD')).toBe(8796093022208001);
  });

  it('reads a fraction of any length in one pass: a long run of zeros is not slow (a /0+$/ regex was quadratic)', () => {
    expect(toMinorUnits(`1.${'0'.repeat(500_000)}`, 'EUR')).toBe(100);
    expectInvalid(() => toMinorUnits(`1.${'0'.repeat(500_000)}1`, 'EUR'), 'amount', /500001 decimal places but EUR has 2/);
  });

  it('always rejects more decimals than the currency has', () => {
    const input = currency.chain((code) => fc.record({
      code: fc.constant(code),
      whole: digits(1, 10),
      fraction: fc.tuple(digits(exponentOf(code), exponentOf(code) + 4), nonZeroDigit).map(([d, last]) => d + last),
      zeros: fc.nat(3),
    }));
    fc.assert(fc.property(input, ({ code, whole, fraction, zeros }) => {
      expectInvalid(() => toMinorUnits(`${whole}.${fraction}${'0'.repeat(zeros)}`, code), 'amount',
        new RegExp(`has ${fraction.length} decimal places? but ${code} has ${exponentOf(code)}: round it`));
    }), RUNS);
  });
});

describe('fromMinorUnits', () => {
  it.each<[number, string, string]>([
    [1999, 'EUR', '19.99'], [1990, 'EUR', '19.90'], [0, 'EUR', '0.00'], [7, 'USD', '0.07'], [100, 'JPY', '100'],
    [0, 'ISK', '0'], [1, 'KWD', '0.001'], [1500, 'BHD', '1.500'], [5, 'CLF', '0.0005'], [-1, 'EUR', '-0.01'],
    [Number.MAX_SAFE_INTEGER, 'EUR', '90071992547409.91'],
  ])('%i %s → %s', (minor, currency, expected) => {
    expect(fromMinorUnits(minor, currency)).toBe(expected);
  });

  it.each<[number, string, string]>([
    [1.5, 'EUR', 'minor'], [NaN, 'EUR', 'minor'], [Number.MAX_SAFE_INTEGER + 1, 'EUR', 'minor'], [1, 'eur', 'currency'],
  ])('rejects %s %s (field %s)', (minor, currency, field) => {
    expectInvalid(() => fromMinorUnits(minor, currency), field);
  });
});
