import { PayError } from '../core/errors.js';
import { formatCommerceDate } from '../core/commerce/search.js';
import { UsageError } from './io.js';

const FORMS = "use 'YYYY-MM-DD HH:MM:SS' (UTC), 'YYYY-MM-DD' or ISO 8601 with a zone";

/** True when the calendar has this day (JavaScript's Date would roll 2025-02-30 over to March 2). */
function realDay(text: string): boolean {
  const [y, m, d] = text.split('-').map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/**
 * A command-line instant for the order filters: `YYYY-MM-DD HH:MM:SS` (UTC, the platform's form),
 * `YYYY-MM-DD` (the start of that day for --from, its last second for --to), or ISO 8601 with a
 * zone (`2025-01-31T12:00:00Z`, `…+02:00`), converted to UTC. Checked here as the core would check
 * it, so a date that does not exist is a usage error (exit 2), not a failed run. A fraction of a second rounds as
 * `rounding` says: up at --from by default (the orders of that second were created before it), down for reconcile.
 */
export function parseCliDate(value: string, edge: 'from' | 'to', command: string, rounding: 'from' | 'to' = edge): string {
  let instant: string | Date | undefined;
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(value)) instant = value;
  else if (/^\d{4}-\d{2}-\d{2}$/.test(value)) instant = `${value} ${edge === 'from' ? '00:00:00' : '23:59:59'}`;
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value) && realDay(value.slice(0, 10))) instant = new Date(value);
  if (instant === undefined) throw new UsageError(`--${edge} '${value}' is not a date: ${FORMS}.`, command);
  try {
    return formatCommerceDate(instant, edge, rounding);
  } catch (error) {
    if (!(error instanceof PayError)) throw error;
    throw new UsageError(`--${edge} '${value}' is not a real date and time (within the years 1000 to 9999): ${FORMS}.`, command);
  }
}

/** A window that ends before it starts matches no order: the core would refuse it as a failed run. */
export function checkWindow(createdFrom: string | undefined, createdTo: string | undefined, command: string): void {
  if (createdFrom !== undefined && createdTo !== undefined && createdFrom > createdTo) {
    throw new UsageError(`--from (${createdFrom} UTC) is after --to (${createdTo} UTC): no order could match.`, command);
  }
}
