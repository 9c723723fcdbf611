/** What a webhook says about one payment. */
export interface PaymentObservation {
  paymentId: string;
  status: string;
  orderId?: string;
  /** Integer minor units. */
  amount?: number;
  currency?: string;
}

/** Reads a payment from a webhook payload; undefined when the event is about no payment. May throw (the delivery is then retried). */
export type ExtractPayment = (payload: unknown) => PaymentObservation | undefined;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : undefined);
const first = <T>(read: (v: unknown) => T | undefined, ...values: unknown[]): T | undefined => {
  for (const v of values) {
    const r = read(v);
    if (r !== undefined) return r;
  }
  return undefined;
};

/**
 * The default extractor. It understands the common shapes: the fields at the top level, under `data`,
 * or under `data.object` (`{ type: 'payment_intent.succeeded', data: { object: { id, status } } }`).
 *
 * - payment id: `payment_id`, `paymentId` (top level, `data`, `data.object`), else `data.object.id`
 * - status: `status` at the same places (most specific first); else the suffix of a `payment.<status>` type
 * - order id: `order_id`, `orderId`, `metadata.order_id` · amount: an integer `amount` · currency: `currency`
 *
 * Events whose `type` does not start with `payment` (e.g. `refund.succeeded`, whose `status` is the
 * refund's) are ignored, so they cannot move a payment's status.
 */
export const defaultExtractPayment: ExtractPayment = (payload) => {
  if (!isObject(payload)) return undefined;
  const type = typeof payload.type === 'string' ? payload.type : undefined;
  if (type !== undefined && !type.toLowerCase().startsWith('payment')) return undefined;
  const data = isObject(payload.data) ? payload.data : {};
  const object = isObject(data.object) ? data.object : {};
  const places = [object, data, payload];

  const paymentId = first(text, ...places.flatMap((p) => [p.payment_id, p.paymentId]), object.id);
  if (paymentId === undefined) return undefined;
  const typeSuffix = type && /^payments?[._]([a-z_]+)$/i.exec(type)?.[1];
  const status = first(text, ...places.map((p) => p.status), typeSuffix);
  if (status === undefined) return undefined;

  const observation: PaymentObservation = { paymentId, status };
  const orderId = first(text, ...places.flatMap((p) => [p.order_id, p.orderId, isObject(p.metadata) ? (p.metadata.order_id ?? p.metadata.orderId) : undefined]));
  const amount = first((v) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined), ...places.map((p) => p.amount));
  const currency = first((v) => (typeof v === 'string' && /^[A-Za-z]{3}$/.test(v) ? v.toUpperCase() : undefined), ...places.map((p) => p.currency));
  if (orderId !== undefined) observation.orderId = orderId;
  if (amount !== undefined) observation.amount = amount;
  if (currency !== undefined) observation.currency = currency;
  return observation;
};
