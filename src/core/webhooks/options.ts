import { z } from 'zod';
import { parseSection, positiveMs } from '../config.js';
import { defaultPayloadEventId } from './payload-event-id.js';

/** `createPay({ webhooks })`: how deliveries to `POST /webhooks` are verified and deduplicated. */
export interface WebhookOptions {
  /** Largest accepted distance between X-Pay-Timestamp and this server's clock, both directions. Default 300; `false` switches the check off. */
  toleranceSeconds?: number | false | undefined;
  /** Largest accepted body; a larger one is answered 413. Default: createPay's `maxBodyBytes` (1 MiB unless set). */
  maxBodyBytes?: number | undefined;
  /**
   * How long a processed event id is remembered, so late retries are answered as duplicates. Default 3 days.
   * Never less than the window a delivery's timestamp is accepted in (2 × tolerance + lease): a shorter
   * value is raised to it, else the same delivery sent again inside that window would run twice.
   */
  retentionMs?: number | undefined;
  /**
   * How long a delivery in progress holds its event id without renewing it. Default 15 s: renewed every
   * third of it while a handler runs, so a slow handler keeps its event, and a process that dies mid-handler
   * (a deploy, kill -9) holds it no longer than this; deliveries before then get 409, and the next one runs it.
   */
  leaseMs?: number | undefined;
  /** The event type handlers are chosen by; default: the payload's `type` field when it is a string. */
  eventType?: (payload: unknown) => string | undefined;
  /**
   * The event id inside the signed payload, which X-Pay-Event-Id (not covered by the signature) must equal, else
   * WEBHOOK_EVENT_ID_MISMATCH: a captured delivery sent first under another event id would otherwise run twice,
   * and the real event be taken for a duplicate. Answered 500: where every delivery mismatches, the payload's `id` is
   * not the event id, and the sender's retries get through once this option reads it. Default: the payload's `id` field (a string, or a whole number);
   * no check when it answers undefined (or null, or ''), so `() => undefined` switches it off. A whole number is
   * read as its digits; the header matches too when HTTP reshaped it (UTF-8 read as Latin-1, spaces trimmed).
   */
  payloadEventId?: (payload: unknown) => string | number | null | undefined;
  /**
   * For serverless functions, which are frozen once they answer: handed each claim write the library
   * retries after answering (a done mark that failed on a store blip), so the platform keeps the function
   * alive until it lands. Pass Vercel's `waitUntil` (`@vercel/functions`), Cloudflare's `ctx.waitUntil`, or
   * `(work) => after(work)` in Next 15+. A long-running server needs none: `pay.drain()` at shutdown.
   */
  waitUntil?: ((work: Promise<unknown>) => void) | undefined;
}

export interface WebhookPolicy {
  toleranceSeconds: number | false;
  maxBodyBytes: number;
  retentionMs: number;
  leaseMs: number;
  /** How long a signature is remembered by the replay guard: at least the whole window a signature is accepted in. */
  signatureRetentionMs: number;
  eventType: (payload: unknown) => string | undefined;
  payloadEventId: (payload: unknown) => unknown;
  waitUntil: ((work: Promise<unknown>) => void) | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_TOLERANCE_SECONDS = 30 * 24 * 60 * 60;

const positiveInt = (unit: string) => z.custom<number>((v) => Number.isSafeInteger(v) && (v as number) > 0, `must be a positive whole number of ${unit}`);
const schema = z.object({
  // At most 30 days: the replay guard keeps a signature 2 × tolerance, and a store's expiry (Redis PX) has a ceiling.
  toleranceSeconds: z.custom<number | false>(
    (v) => v === false || (typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= MAX_TOLERANCE_SECONDS),
    'must be a positive number of seconds up to 2592000 (30 days), or false to switch the check off',
  ).default(300),
  maxBodyBytes: positiveInt('bytes').default(1024 * 1024),
  retentionMs: positiveInt('milliseconds').default(3 * DAY_MS),
  // A running delivery renews its lease on a timer every lease/3, which Node fires after 1 ms past its longest delay.
  leaseMs: positiveMs.default(15_000),
  eventType: z.custom<(payload: unknown) => string | undefined>((v) => typeof v === 'function', 'must be a function (payload) => string | undefined').optional(),
  payloadEventId: z.custom<(payload: unknown) => string | number | null | undefined>((v) => typeof v === 'function', 'must be a function (payload) => string | undefined, such as () => undefined to switch the check off').optional(),
  waitUntil: z.custom<(work: Promise<unknown>) => void>((v) => typeof v === 'function', "must be a function (work: Promise) => void, such as waitUntil from '@vercel/functions'").optional(),
});

/** The payload's `type` field when it is a non-empty string. */
function defaultEventType(payload: unknown): string | undefined {
  const type = typeof payload === 'object' && payload !== null ? (payload as { type?: unknown }).type : undefined;
  return typeof type === 'string' && type !== '' ? type : undefined;
}

/** Validates `webhooks` options once, at creation; throws CONFIG_INVALID naming the option. */
export function resolveWebhookOptions(options: WebhookOptions = {}): WebhookPolicy {
  const { toleranceSeconds, maxBodyBytes, retentionMs, leaseMs, eventType, payloadEventId, waitUntil } = parseSection('webhooks', schema, options);
  // A signature is accepted while now is within ±tolerance of its timestamp: a window of 2 × tolerance
  // from the first sighting at worst. Without a tolerance, remember it as long as event ids.
  // Never shorter than a lease, or a replay under a new event id would pass while the original still runs.
  const signatureRetentionMs = toleranceSeconds === false ? Math.max(retentionMs, leaseMs) : Math.ceil(2 * toleranceSeconds * 1000) + leaseMs;
  return { toleranceSeconds, maxBodyBytes, retentionMs: Math.max(retentionMs, signatureRetentionMs), leaseMs, signatureRetentionMs, eventType: eventType ?? defaultEventType, payloadEventId: payloadEventId ?? defaultPayloadEventId, waitUntil };
}
