import { PayError } from '../errors.js';
import { describeKind } from '../option-types.js';

/**
 * A memory store's `maxEntries`: a whole number of 1 or more, or the default. Anything else is refused
 * rather than compared: NaN (a `Number(process.env.X)` left unset) would lift the cap, 0 or less would keep one entry.
 */
export function maxEntriesOption(store: string, value: unknown, defaultValue: number, what: string): number {
  if (value === undefined) return defaultValue;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1) return value;
  throw new PayError('CONFIG_INVALID', `new ${store}({ maxEntries }) takes a whole number of ${what}, 1 or more (the default is ${defaultValue.toLocaleString('en-US')}), got ${describeKind(value)}.`, { details: { options: ['maxEntries'] } });
}
