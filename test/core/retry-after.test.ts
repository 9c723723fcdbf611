/**
 * parseRetryAfter (src/core/retry-after.ts): a Retry-After header, delta-seconds or an HTTP date, as
 * milliseconds from now; undefined when it cannot be read. The clock is pinned, so dates give exact values.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseRetryAfter } from '../../src/core/retry-after.js';

const NOW = Date.parse('2025-01-01T00:00:00Z');

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('parseRetryAfter: delta-seconds', () => {
  it.each([
    ['0', 0],
    ['1', 1_000],
    ['30', 30_000],
    ['120', 120_000],
    ['86400', 86_400_000],
    ['007', 7_000],
    [' 30 ', 30_000], // surrounding whitespace, as a header value may carry
    ['\t5\t', 5_000],
  ])('%j is %d ms', (value, ms) => {
    expect(parseRetryAfter(value)).toBe(ms);
  });
});

describe('parseRetryAfter: HTTP dates', () => {
  it('a date in the future is the time until it', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT')).toBe(30_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 01:00:00 GMT')).toBe(3_600_000);
    // The obsolete formats RFC 9110 still asks recipients to read: RFC 850 and asctime.
    expect(parseRetryAfter('Wednesday, 01-Jan-25 00:00:30 GMT')).toBe(30_000);
    expect(parseRetryAfter('Wed Jan  1 00:00:30 2025')).toBe(30_000);
  });

  it('a date now or in the past is 0, never a negative wait', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:00 GMT')).toBe(0);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:59:59 GMT')).toBe(0);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT')).toBe(0);
  });

  it('follows the clock: the same date is a shorter wait later', () => {
    vi.setSystemTime(NOW + 10_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT')).toBe(20_000);
  });

  it('a date far in the future is the exact wait, not capped to a timer', () => {
    expect(parseRetryAfter('Fri, 31 Dec 9999 23:59:59 GMT')).toBe(251_666_611_199_000);
  });
});

describe('parseRetryAfter: sent twice, joined', () => {
  // fetch joins a repeated header with ', '; node:http keeps the first. Either way the first counts.
  it('reads the first of the values', () => {
    expect(parseRetryAfter('1, 1')).toBe(1_000);
    expect(parseRetryAfter('2,30')).toBe(2_000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT, Wed, 01 Jan 2025 01:00:00 GMT')).toBe(30_000);
    expect(parseRetryAfter('1 2')).toBeUndefined(); // not a list: unreadable
  });
});

describe('parseRetryAfter: what cannot be read', () => {
  it.each(['', '   ', 'soon', 'later, please', '1e3', '0x10', '12abc', 'NaN', 'Infinity', 'Wed, 99 Foo 2025 00:00:00 GMT'])('%j is undefined', (value) => {
    expect(parseRetryAfter(value)).toBeUndefined();
  });
});

describe('parseRetryAfter: negative and fractional numbers', () => {
  // Delta-seconds is 1*DIGIT (RFC 9110), so these are unreadable; Date.parse, which V8 applies leniently, read
  // '-5', '-1', '1.5' and '+5' as dates in 2001 (a wait of 0), and '-86400' as the year 86400.
  it('are unreadable (undefined), not dates', () => {
    for (const value of ['-5', '-1', '-86400', '1.5', '+5']) expect(parseRetryAfter(value), value).toBeUndefined();
  });
});

describe('parseRetryAfter: huge values', () => {
  it('stays a finite, safe number of milliseconds', () => {
    expect(parseRetryAfter('9007199254740')).toBe(9_007_199_254_740_000); // the last whole second below the cap
    expect(parseRetryAfter('9007199254741')).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter(String(30 * 86_400))).toBe(30 * 86_400_000); // past Node's longest timer, kept exact
    // 400 digits: Number() is Infinity, which would reach a header and a JSON report.
    expect(parseRetryAfter('9'.repeat(400))).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter(`${'9'.repeat(400)} `)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
