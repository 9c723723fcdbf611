/**
 * Deterministic orders shaped like the recorded Magento responses (test/fixtures/commerce): each is
 * built on demand from (seed, entity_id) and the few facts the index keeps (created_at, state,
 * currency), so 300,000 orders cost a few typed arrays, not hundreds of megabytes.
 */

import type { SandboxOrder } from './types.js';

/** mulberry32 over a hash of (seed, id, stream): a small, fast, well-spread PRNG. */
export function prng(seed: number, id: number, stream = 0): () => number {
  let a = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(id + 1, 0xc2b2ae35) ^ Math.imul(stream + 1, 0x27d4eb2f)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const STATES = [
  { state: 'new', status: 'pending' },
  { state: 'processing', status: 'processing' },
  { state: 'complete', status: 'complete' },
] as const;

/** Currency, minor-unit digits, shipping fee and price range in minor units, and a matching address. */
export const CURRENCIES = [
  { code: 'USD', exp: 2, ship: 500, min: 900, max: 15_000, country: 'US', city: 'Purchase', region: 'New York', regionCode: 'NY', regionId: 43, postcode: '10577' },
  { code: 'EUR', exp: 2, ship: 495, min: 900, max: 15_000, country: 'DE', city: 'Berlin', region: 'Berlin', regionCode: 'BER', regionId: 82, postcode: '10115' },
  { code: 'JPY', exp: 0, ship: 600, min: 800, max: 20_000, country: 'JP', city: 'Tokyo', region: 'Tokyo', regionCode: 'JP-13', regionId: 566, postcode: '100-0001' },
  { code: 'KWD', exp: 3, ship: 1_500, min: 2_000, max: 45_000, country: 'KW', city: 'Kuwait City', region: 'Al Asimah', regionCode: 'KW-KU', regionId: 0, postcode: '13001' },
] as const;

const PRODUCTS = [
  ['Radiant Tee-M-Orange', 'WS12-M-Orange', 1], ['Sprite Yoga Strap 8 foot', '24-WG083-blue', 1], ['Fusion Backpack', '24-MB02', 1],
  ['Argus All-Weather Tank-L-Gray', 'MT07-L-Gray', 1], ['Push It Messenger Bag', '24-WB04', 1], ['Affirm Water Bottle', '24-UG06', 1],
  ['Dual Handle Cardio Ball', '24-UG07', 1], ['Advanced Pilates & Yoga (Strength)', '240-LV08', 0], ['Breathe-Easy Tank-XS-Purple', 'WT09-XS-Purple', 1],
] as const;
const FIRST = ['Jane', 'John', 'Piotr', 'Aiko', 'Fatima', 'Lukas', 'Maria', 'Omar', 'Chen', 'Sofia'];
const LAST = ['Doe', 'Smith', 'Karwatka', 'Tanaka', 'Al-Sabah', 'Becker', 'Rossi', 'Haddad', 'Wang', 'Garcia'];

/** Minor units as the JSON number Magento sends: 2706 EUR → 27.06, 1500 KWD → 1.5, 800 JPY → 800. */
export const decimal = (minor: number, exp: number): number => minor / 10 ** exp;

export interface OrderFacts {
  id: number;
  created: string;
  stateIndex: number;
  currencyIndex: number;
}

const TAX_PERCENTS = [0, 0, 10, 19];

/** One order; written field by field with few temporaries, since the benchmark's sandbox builds 100 per page. */
export function generateOrder(seed: number, facts: OrderFacts): SandboxOrder {
  const { id, created } = facts;
  const r = prng(seed, id, 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const cur = CURRENCIES[facts.currencyIndex]!;
  const { state, status } = STATES[facts.stateIndex]!;
  const paid = state !== 'new';
  const amount = (minor: number) => decimal(minor, cur.exp);
  const guest = r() < 0.3;
  const first = pick(FIRST);
  const last = pick(LAST);
  const email = `${first}.${last}${id}@example.com`.toLowerCase();
  const taxPercent = pick(TAX_PERCENTS);
  const updated = created;

  const count = 1 + Math.floor(r() * r() * 3);
  const items: Record<string, unknown>[] = [];
  let subtotal = 0;
  let tax = 0;
  let qtyTotal = 0;
  let weightTotal = 0;
  for (let i = 0; i < count; i++) {
    const [name, sku, weight] = pick(PRODUCTS);
    const qty = 1 + Math.floor(r() * r() * 3);
    const price = cur.min + Math.floor(r() * (cur.max - cur.min));
    const unitTax = Math.round((price * taxPercent) / 100);
    const lineTax = unitTax * qty;
    const row = price * qty;
    const itemId = id * 4 + i;
    subtotal += row;
    tax += lineTax;
    qtyTotal += qty;
    weightTotal += weight * qty;
    const item: Record<string, unknown> = {
      amount_refunded: 0, base_amount_refunded: 0, base_discount_amount: 0, base_discount_invoiced: 0,
      base_original_price: amount(price), base_price: amount(price), base_price_incl_tax: amount(price + unitTax),
      base_row_invoiced: paid ? amount(row) : 0, base_row_total: amount(row), base_row_total_incl_tax: amount(row + lineTax),
      base_tax_amount: amount(lineTax), base_tax_invoiced: paid ? amount(lineTax) : 0, created_at: created, discount_amount: 0, discount_invoiced: 0,
      discount_percent: 0, free_shipping: 0, is_qty_decimal: 0, is_virtual: weight === 0 ? 1 : 0, item_id: itemId, name, no_discount: 0,
      order_id: id, original_price: amount(price), price: amount(price), price_incl_tax: amount(price + unitTax),
      product_id: 1500 + (itemId % 97), product_type: weight === 0 ? 'downloadable' : 'simple', qty_canceled: 0, qty_invoiced: paid ? qty : 0,
      qty_ordered: qty, qty_refunded: 0, qty_shipped: state === 'complete' ? qty : 0, quote_item_id: itemId + 7, row_invoiced: paid ? amount(row) : 0,
      row_total: amount(row), row_total_incl_tax: amount(row + lineTax), row_weight: weight * qty, sku, store_id: 1,
      tax_amount: amount(lineTax), tax_invoiced: paid ? amount(lineTax) : 0, tax_percent: taxPercent, updated_at: updated,
    };
    if (weight) item.weight = weight;
    items.push(item);
  }
  const virtual = weightTotal === 0;
  const shipping = virtual ? 0 : cur.ship;
  const grand = subtotal + tax + shipping;
  const address = (type: string, entityId: number): Record<string, unknown> => {
    const a: Record<string, unknown> = {
      address_type: type, city: cur.city, country_id: cur.country, email, entity_id: entityId, firstname: first, lastname: last, parent_id: id,
      postcode: cur.postcode, region: cur.region, region_code: cur.regionCode,
    };
    if (cur.regionId) a.region_id = cur.regionId;
    a.street = [`${1 + (id % 200)} Oak Ave`];
    a.telephone = r() < 0.2 ? null : `512-555-${String(1000 + (id % 9000))}`;
    return a;
  };
  const total: Record<string, unknown> = {
    base_shipping_amount: amount(shipping), base_shipping_discount_amount: 0, base_shipping_incl_tax: amount(shipping), base_shipping_tax_amount: 0,
    shipping_amount: amount(shipping), shipping_discount_amount: 0, shipping_discount_tax_compensation_amount: 0, shipping_incl_tax: amount(shipping), shipping_tax_amount: 0,
  };
  if (paid) {
    total.base_shipping_invoiced = amount(shipping);
    total.shipping_invoiced = amount(shipping);
  }

  const order: Record<string, unknown> = {
    base_currency_code: cur.code, base_discount_amount: 0, base_grand_total: amount(grand), base_discount_tax_compensation_amount: 0,
    base_shipping_amount: amount(shipping), base_shipping_discount_amount: 0, base_shipping_incl_tax: amount(shipping), base_shipping_tax_amount: 0,
    base_subtotal: amount(subtotal), base_subtotal_incl_tax: amount(subtotal + tax), base_tax_amount: amount(tax), base_total_due: paid ? 0 : amount(grand),
    base_to_global_rate: 1, base_to_order_rate: 1, billing_address_id: id * 2, created_at: created, customer_email: email,
  };
  if (!guest) {
    order.customer_firstname = first;
    order.customer_id = 1 + (id % 5000);
    order.customer_lastname = last;
  }
  order.customer_group_id = guest ? 0 : 1;
  order.customer_is_guest = guest ? 1 : 0;
  order.customer_note_notify = 1;
  order.discount_amount = 0;
  order.email_sent = 1;
  order.entity_id = id;
  order.global_currency_code = cur.code;
  order.grand_total = amount(grand);
  order.discount_tax_compensation_amount = 0;
  order.increment_id = String(id).padStart(9, '0');
  order.is_virtual = virtual ? 1 : 0;
  order.order_currency_code = cur.code;
  order.protect_code = (id * 2654435761 >>> 0).toString(16).padStart(8, '0').slice(0, 6);
  order.quote_id = id + 1000;
  order.shipping_amount = amount(shipping);
  if (!virtual) order.shipping_description = 'Flat Rate - Fixed';
  order.shipping_discount_amount = 0;
  order.shipping_discount_tax_compensation_amount = 0;
  order.shipping_incl_tax = amount(shipping);
  order.shipping_tax_amount = 0;
  order.state = state;
  order.status = status;
  order.store_currency_code = cur.code;
  order.store_id = 1;
  order.store_name = 'Main Website\nMain Website Store\n';
  order.store_to_base_rate = 0;
  order.store_to_order_rate = 0;
  order.subtotal = amount(subtotal);
  order.subtotal_incl_tax = amount(subtotal + tax);
  order.tax_amount = amount(tax);
  order.total_due = paid ? 0 : amount(grand);
  order.total_item_count = count;
  order.total_qty_ordered = qtyTotal;
  order.updated_at = updated;
  order.weight = weightTotal;
  if (paid) {
    order.base_total_paid = amount(grand);
    order.total_paid = amount(grand);
    order.base_total_invoiced = amount(grand);
    order.total_invoiced = amount(grand);
    order.base_subtotal_invoiced = amount(subtotal);
    order.subtotal_invoiced = amount(subtotal);
    order.base_tax_invoiced = amount(tax);
    order.tax_invoiced = amount(tax);
    order.base_shipping_invoiced = amount(shipping);
    order.shipping_invoiced = amount(shipping);
    order.base_total_invoiced_cost = 0;
    order.base_discount_invoiced = 0;
    order.discount_invoiced = 0;
  }
  const payment: Record<string, unknown> = {
    account_status: null, additional_information: paid ? ['Check / Money order', ''] : ['Bank Transfer Payment', ''],
    amount_ordered: amount(grand), base_amount_ordered: amount(grand), base_shipping_amount: amount(shipping), cc_last4: null, entity_id: id,
    method: paid ? 'checkmo' : 'banktransfer', parent_id: id, shipping_amount: amount(shipping),
  };
  if (paid) {
    payment.amount_paid = amount(grand);
    payment.base_amount_paid = amount(grand);
    payment.base_shipping_captured = amount(shipping);
    payment.shipping_captured = amount(shipping);
  }
  order.items = items;
  order.billing_address = address('billing', id * 2);
  const shippingRecord: Record<string, unknown> = virtual ? { total } : { address: address('shipping', id * 2 - 1), method: 'flatrate_flatrate', total };
  order.payment = payment;
  order.status_histories = paid
    ? [{ comment: `Captured amount of ${amount(grand)} ${cur.code} online.`, created_at: updated, entity_id: id, entity_name: 'invoice', is_customer_notified: 0, is_visible_on_front: 0, parent_id: id, status }]
    : [];
  order.extension_attributes = { shipping_assignments: [{ shipping: shippingRecord, items }] };
  return order as SandboxOrder;
}
