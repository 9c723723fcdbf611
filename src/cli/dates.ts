import { UsageError } from './io.js';

/**
 * A command-line instant for the order filters: `YYYY-MM-DD HH:MM:SS` (UTC, the platform's form),
 * `YYYY-MM-DD` (the start of that day for --from, its last second for --to), or ISO 8601 with a
 * zone (`2025-01-31T12:00:00Z`, `…+02:00`), converted to UTC.
 */
export function parseCliDate(value: string, edge: 'from' | 'to', command: string): string | Date {
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) return value;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value} ${edge === 'from' ? '00:00:00' : '23:59:59'}`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new UsageError(`--${edge} '${value}' is not a date: use 'YYYY-MM-DD HH:MM:SS' (UTC), 'YYYY-MM-DD' or ISO 8601 with a zone.`, command);
}
