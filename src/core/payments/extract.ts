/** What a webhook says about one payment. */
export interface PaymentObservation {
  /** The service's payment id. */
  paymentId: string;
  /** The status the event reports, as sent. */
  status: string;
  /** The merchant's order id, when the event carries it. */
  orderId?: string;
  /** Integer minor units. */
  amount?: number;
  /** ISO 4217 code, when the event carries it. */
  currency?: string;
}

/** Reads a payment from a webhook payload; undefined when the event is about no payment. May throw (the delivery is then retried). */
export type ExtractPayment = (payload: unknown) => PaymentObservation | undefined;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : undefined);
const integer = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
const currencyCode = (v: unknown): string | undefined => (typeof v === 'string' && /^[A-Za-z]{3}$/.test(v) ? v.toUpperCase() : undefined);

const PAYMENT_ID_KEYS = ['payment_id', 'paymentId'];
const ORDER_ID_KEYS = ['order_id', 'orderId'];
const STATUS_KEYS = ['status'];
const AMOUNT_KEYS = ['amount'];
const CURRENCY_KEYS = ['currency'];

/** The first readable value of `keys` in `places`, most specific place first. Runs on every webhook: no allocation. */
function find<T>(places: readonly (Obj | undefined)[], keys: readonly string[], read: (v: unknown) => T | undefined): T | undefined {
  for (const place of places) {
    if (place === undefined) continue;
    for (const key of keys) {
      const value = read(place[key]);
      if (value !== undefined) return value;
    }
    if (keys === ORDER_ID_KEYS && isObject(place.metadata)) {
      const value = read(place.metadata.order_id ?? place.metadata.orderId);
      if (value !== undefined) return value;
    }
  }
  return undefined;
}

/** Types that begin with `payment` but report on something else: its method, a payment link, a refund or dispute. */
const NOT_ABOUT_A_PAYMENT = /^payment_(method|link)|[._](refund|dispute|chargeback)/i;

/** Whether the default extractor takes events of this type as news of a payment. */
export function isAboutAPayment(type: string): boolean {
  return /^payment/i.test(type) && !NOT_ABOUT_A_PAYMENT.test(type);
}

/**
 * The default extractor. It understands the common shapes: the fields at the top level, under `data`,
 * or under `data.object` (`{ type: 'payment_intent.succeeded', data: { object: { id, status } } }`).
 *
 * - payment id: `payment_id`, `paymentId` (top level, `data`, `data.object`), else `data.object.id`
 * - status: `status` at the same places (most specific first); else the suffix of a `payment.<status>` type
 * - order id: `order_id`, `orderId`, `metadata.order_id` · amount: an integer `amount` · currency: `currency`
 *
 * Events whose `type` does not start with `payment` (e.g. `refund.succeeded`, whose `status` is the
 * refund's) are ignored, so they cannot move a payment's status; so are those that do but are about something
 * else: a payment method or link (`payment_method.attached`, its id no payment's), a refund or dispute of one.
 */
export const defaultExtractPayment: ExtractPayment = (payload) => {
  if (!isObject(payload)) return undefined;
  const type = typeof payload.type === 'string' ? payload.type : undefined;
  if (type !== undefined && !isAboutAPayment(type)) return undefined;
  const data = isObject(payload.data) ? payload.data : undefined;
  const object = data !== undefined && isObject(data.object) ? data.object : undefined;
  const places = [object, data, payload];

  const paymentId = find(places, PAYMENT_ID_KEYS, text) ?? text(object?.id);
  if (paymentId === undefined) return undefined;
  const status = find(places, STATUS_KEYS, text) ?? (type === undefined ? undefined : /^payments?[._]([a-z_]+)$/i.exec(type)?.[1]);
  if (status === undefined) return undefined;

  const observation: PaymentObservation = { paymentId, status };
  const orderId = find(places, ORDER_ID_KEYS, text);
  const amount = find(places, AMOUNT_KEYS, integer);
  const currency = find(places, CURRENCY_KEYS, currencyCode);
  if (orderId !== undefined) observation.orderId = orderId;
  if (amount !== undefined) observation.amount = amount;
  if (currency !== undefined) observation.currency = currency;
  return observation;
};
