import { PayError } from '../errors.js';
import { describeKind } from '../option-types.js';

/** The payload's `id` field when it is a non-empty string or a whole number (a service with numeric ids). */
export function defaultPayloadEventId(payload: unknown): string | undefined {
  const id = typeof payload === 'object' && payload !== null ? (payload as { id?: unknown }).id : undefined;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? eventIdOf(id) : undefined;
}

/**
 * What an extractor answered, as an event id: a string ('' is none), a whole number as its digits (as the
 * default reads one), null or undefined as none. Anything else is the extractor's mistake, refused on the
 * delivery it met rather than compared with the header as a mismatch no retry could pass.
 */
export function eventIdOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new PayError('CONFIG_INVALID', `paywidget-server: webhooks.payloadEventId answered ${describeKind(value)}; it must answer the event id as a string or a whole number, or undefined when the payload carries none.`, { details: { options: ['webhooks.payloadEventId'] } });
}

/**
 * Whether the X-Pay-Event-Id a framework handed over is the signed id as sent: HTTP parsers trim spaces and tabs
 * from a header's ends and read its bytes as Latin-1, so an id a sender wrote in UTF-8 arrives as its bytes'
 * Latin-1 characters ("evt é" as "evt Ã©"). Anything else is another id.
 */
export function sameEventId(header: string, signed: string): boolean {
  if (header === signed) return true;
  const trimmed = signed.replace(/^[ \t]+|[ \t]+$/g, '');
  if (header === trimmed) return true;
  // Code units past 0xFF are no Latin-1 reading of bytes.
  for (let i = 0; i < header.length; i++) if (header.charCodeAt(i) > 0xff) return false;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(header, (c) => c.charCodeAt(0))) === trimmed;
  } catch {
    return false;
  }
}
