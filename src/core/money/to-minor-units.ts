import { invalidInput } from '../errors.js';
import { CURRENCY_EXPONENTS } from './iso4217.js';

/** Digits of the ISO 4217 minor unit (JPY 0, EUR 2, KWD 3, CLF 4), or undefined for an unknown code. */
export function currencyExponent(currency: string): number | undefined {
  return isKnownCurrency(currency) ? CURRENCY_EXPONENTS[currency] : undefined;
}

/** Exact match on an uppercase ISO 4217 code: 'EUR' yes, 'eur' or ' EUR' no. */
export function isKnownCurrency(code: string): boolean {
  // typeof guards JS callers (/x/.test(['EUR']) is true); hasOwn keeps 'toString' out.
  return typeof code === 'string' && /^[A-Z]{3}$/.test(code) && Object.hasOwn(CURRENCY_EXPONENTS, code);
}

function exponentOf(currency: string): number {
  const exponent = currencyExponent(currency);
  if (exponent !== undefined) return exponent;
  const hint = typeof currency === 'string' && isKnownCurrency(currency.trim().toUpperCase())
    ? `use '${currency.trim().toUpperCase()}'`
    : "use an uppercase ISO 4217 code such as 'EUR'";
  throw invalidInput('currency', `currency ${JSON.stringify(currency)} is not a known ISO 4217 currency: ${hint}`);
}

const PLAIN_DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
/** Every decimal of up to 15 significant digits survives a trip through a double (DBL_DIG). */
const MAX_EXACT_DIGITS = 15;
const MAX_EXACT_MINOR = 10n ** BigInt(MAX_EXACT_DIGITS);

/** The text without its trailing zeros, in linear time (a /0+$/ regex retries from every zero: quadratic on '0.000…1'). */
function withoutTrailingZeros(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 48) end--;
  return text.slice(0, end);
}

/** The amount as a plain decimal string, or a PayError saying which rule it breaks. */
function toDecimalString(value: unknown): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw invalidInput('amount', `amount is ${value}: pass a finite number or a decimal string`);
    if (value < 0) throw invalidInput('amount', `amount ${value} is negative: only amounts of zero or more can be converted`);
    // String() is the shortest string that round-trips, so 19.99 gives '19.99', not 19.989999...
    const text = String(value);
    if (/e/i.test(text)) throw invalidInput('amount', `amount ${text} has no plain decimal form as a number: pass it as a decimal string`);
    return text;
  }
  if (typeof value !== 'string') throw invalidInput('amount', `amount must be a decimal string or a number, got ${typeof value}`);
  const shown = `'${value}'`;
  if (value === '') throw invalidInput('amount', "amount is an empty string: pass a decimal such as '19.99'");
  if (/\s/.test(value)) throw invalidInput('amount', `amount ${shown} contains whitespace: trim it before converting`);
  if (value.startsWith('-')) throw invalidInput('amount', `amount ${shown} is negative: only amounts of zero or more can be converted`);
  if (/[eE]/.test(value)) throw invalidInput('amount', `amount ${shown} uses exponent notation: write it as a plain decimal such as '1000'`);
  if (/[,_']/.test(value)) {
    throw invalidInput('amount', `amount ${shown} contains a separator: use no grouping separators and '.' as the decimal point, such as '1234.56'`);
  }
  if (!PLAIN_DECIMAL.test(value)) throw invalidInput('amount', `amount ${shown} is not a plain decimal: use digits with an optional '.' fraction, such as '19.99'`);
  return value;
}

/**
 * Converts a non-negative decimal amount to integer minor units of `currency`, exactly:
 * '19.99' EUR → 1999, '100' JPY → 100, '1.5' KWD → 1500. A number is first written as its
 * shortest round-trip string (19.99 → '19.99') and converted from there, never multiplied,
 * because 19.99 * 100 is 1998.9999999999998.
 * Throws PayError INVALID_INPUT (details.field 'amount' or 'currency') instead of rounding.
 */
export function toMinorUnits(value: string | number, currency: string): number {
  const exponent = exponentOf(currency);
  const text = toDecimalString(value);
  const [, whole = '', fraction = ''] = PLAIN_DECIMAL.exec(text) ?? [];
  // Trailing zeros carry no value ('19.990' EUR is fine); anything else past the exponent would need rounding.
  const significant = withoutTrailingZeros(fraction);
  if (significant.length > exponent) {
    const places = (n: number) => `${n} decimal place${n === 1 ? '' : 's'}`;
    throw invalidInput('amount', `amount '${text}' has ${places(significant.length)} but ${currency} has ${exponent}: round it before converting`);
  }
  const minor = BigInt(whole + significant.padEnd(exponent, '0'));
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidInput('amount', `amount '${text}' ${currency} is ${minor} minor units, more than a JavaScript number holds exactly (${Number.MAX_SAFE_INTEGER})`);
  }
  // A double keeps 15 significant digits exactly; past them its shortest string may not be the decimal
  // that was sent (80000000000000.01 reads back as 80000000000000.02), and rounding is never silent here.
  // Counted in minor units, not in the string: 90071992547409.91 reads back as 90071992547409.9, 15 digits
  // that look exact, yet a cent was lost. Below 10^15 minor units every amount at the currency's precision
  // has at most 15 digits, which a double holds exactly.
  if (typeof value === 'number' && minor >= MAX_EXACT_MINOR) {
    throw invalidInput('amount', `amount ${text} ${currency} is ${minor} minor units: more significant digits than a JavaScript number keeps exactly (${MAX_EXACT_DIGITS}), so it may not be the amount that was sent: pass it as a decimal string`);
  }
  return Number(minor);
}

/** The exact decimal string for `minor` units: 1999 EUR → '19.99', 100 JPY → '100', 1 KWD → '0.001'. For logs and tests. */
export function fromMinorUnits(minor: number, currency: string): string {
  const exponent = exponentOf(currency);
  if (!Number.isSafeInteger(minor)) throw invalidInput('minor', `minor units must be a safe integer, got ${minor}`);
  const sign = minor < 0 ? '-' : '';
  // Safe integers never print in exponent notation, so this is all digits.
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  if (exponent === 0) return sign + digits;
  return `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}
