import type { HeaderInput } from './types.js';

/**
 * One header by lowercase name, whatever shape the headers came in. A repeated header reads as its values
 * joined with ", ", as Fetch's `Headers.get` and Node's `req.headers` give it, so every framework agrees.
 */
export function getHeader(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  let value = record[name];
  if (value === undefined) {
    // Plain records may keep the sender's casing; Node's incoming headers are already lowercase.
    for (const key in record) {
      if (key.toLowerCase() === name) {
        value = record[key];
        break;
      }
    }
  }
  return Array.isArray(value) ? value.join(', ') : value;
}
