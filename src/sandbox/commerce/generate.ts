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
  const taxPercent = pick([0, 0, 10, 19]);

  const lines = Array.from({ length: 1 + Math.floor(r() * r() * 3) }, (_, i) => {
    const [name, sku, weight] = pick(PRODUCTS);
    const qty = 1 + Math.floor(r() * r() * 3);
    const price = cur.min + Math.floor(r() * (cur.max - cur.min));
    const unitTax = Math.round((price * taxPercent) / 100);
    return { itemId: id * 4 + i, name, sku, weight, qty, price, unitTax, tax: unitTax * qty };
  });
  const subtotal = lines.reduce((s, l) => s + l.price * l.qty, 0);
  const tax = lines.reduce((s, l) => s + l.tax, 0);
  const virtual = lines.every((l) => l.weight === 0);
  const shipping = virtual ? 0 : cur.ship;
  const grand = subtotal + tax + shipping;
  const updated = created;

  const items = lines.map((l) => ({
    amount_refunded: 0, base_amount_refunded: 0, base_discount_amount: 0, base_discount_invoiced: 0,
    base_original_price: amount(l.price), base_price: amount(l.price), base_price_incl_tax: amount(l.price + l.unitTax),
    base_row_invoiced: paid ? amount(l.price * l.qty) : 0, base_row_total: amount(l.price * l.qty), base_row_total_incl_tax: amount(l.price * l.qty + l.tax),
    base_tax_amount: amount(l.tax), base_tax_invoiced: paid ? amount(l.tax) : 0, created_at: created, discount_amount: 0, discount_invoiced: 0,
    discount_percent: 0, free_shipping: 0, is_qty_decimal: 0, is_virtual: l.weight === 0 ? 1 : 0, item_id: l.itemId, name: l.name, no_discount: 0,
    order_id: id, original_price: amount(l.price), price: amount(l.price), price_incl_tax: amount(l.price + l.unitTax),
    product_id: 1500 + (l.itemId % 97), product_type: l.weight === 0 ? 'downloadable' : 'simple', qty_canceled: 0, qty_invoiced: paid ? l.qty : 0,
    qty_ordered: l.qty, qty_refunded: 0, qty_shipped: state === 'complete' ? l.qty : 0, quote_item_id: l.itemId + 7, row_invoiced: paid ? amount(l.price * l.qty) : 0,
    row_total: amount(l.price * l.qty), row_total_incl_tax: amount(l.price * l.qty + l.tax), row_weight: l.weight * l.qty, sku: l.sku, store_id: 1,
    tax_amount: amount(l.tax), tax_invoiced: paid ? amount(l.tax) : 0, tax_percent: taxPercent, updated_at: updated,
    ...(l.weight ? { weight: l.weight } : {}),
  }));
  const address = (type: string, entityId: number) => ({
    address_type: type, city: cur.city, country_id: cur.country, email, entity_id: entityId, firstname: first, lastname: last, parent_id: id,
    postcode: cur.postcode, region: cur.region, region_code: cur.regionCode, ...(cur.regionId ? { region_id: cur.regionId } : {}),
    street: [`${1 + (id % 200)} Oak Ave`], telephone: r() < 0.2 ? null : `512-555-${String(1000 + (id % 9000))}`,
  });
  const totals = {
    base_shipping_amount: amount(shipping), base_shipping_discount_amount: 0, base_shipping_incl_tax: amount(shipping), base_shipping_tax_amount: 0,
    shipping_amount: amount(shipping), shipping_discount_amount: 0, shipping_discount_tax_compensation_amount: 0, shipping_incl_tax: amount(shipping), shipping_tax_amount: 0,
    ...(paid ? { base_shipping_invoiced: amount(shipping), shipping_invoiced: amount(shipping) } : {}),
  };
  const money = (key: string, minor: number) => ({ [`base_${key}`]: amount(minor), [key]: amount(minor) });

  return {
    base_currency_code: cur.code, base_discount_amount: 0, base_grand_total: amount(grand), base_discount_tax_compensation_amount: 0,
    base_shipping_amount: amount(shipping), base_shipping_discount_amount: 0, base_shipping_incl_tax: amount(shipping), base_shipping_tax_amount: 0,
    base_subtotal: amount(subtotal), base_subtotal_incl_tax: amount(subtotal + tax), base_tax_amount: amount(tax), base_total_due: paid ? 0 : amount(grand),
    base_to_global_rate: 1, base_to_order_rate: 1, billing_address_id: id * 2, created_at: created, customer_email: email,
    ...(guest ? {} : { customer_firstname: first, customer_id: 1 + (id % 5000), customer_lastname: last }),
    customer_group_id: guest ? 0 : 1, customer_is_guest: guest ? 1 : 0, customer_note_notify: 1, discount_amount: 0, email_sent: 1, entity_id: id,
    global_currency_code: cur.code, grand_total: amount(grand), discount_tax_compensation_amount: 0, increment_id: String(id).padStart(9, '0'),
    is_virtual: virtual ? 1 : 0, order_currency_code: cur.code, protect_code: (id * 2654435761 >>> 0).toString(16).padStart(8, '0').slice(0, 6),
    quote_id: id + 1000, shipping_amount: amount(shipping), ...(virtual ? {} : { shipping_description: 'Flat Rate - Fixed' }), shipping_discount_amount: 0,
    shipping_discount_tax_compensation_amount: 0, shipping_incl_tax: amount(shipping), shipping_tax_amount: 0, state, status, store_currency_code: cur.code,
    store_id: 1, store_name: 'Main Website\nMain Website Store\n', store_to_base_rate: 0, store_to_order_rate: 0, subtotal: amount(subtotal),
    subtotal_incl_tax: amount(subtotal + tax), tax_amount: amount(tax), total_due: paid ? 0 : amount(grand), total_item_count: items.length,
    total_qty_ordered: lines.reduce((s, l) => s + l.qty, 0), updated_at: updated, weight: lines.reduce((s, l) => s + l.weight * l.qty, 0),
    ...(paid ? { ...money('total_paid', grand), ...money('total_invoiced', grand), ...money('subtotal_invoiced', subtotal), ...money('tax_invoiced', tax), ...money('shipping_invoiced', shipping), base_total_invoiced_cost: 0, ...money('discount_invoiced', 0) } : {}),
    items,
    billing_address: address('billing', id * 2),
    payment: {
      account_status: null, additional_information: paid ? ['Check / Money order', ''] : ['Bank Transfer Payment', ''],
      amount_ordered: amount(grand), base_amount_ordered: amount(grand), base_shipping_amount: amount(shipping), cc_last4: null, entity_id: id,
      method: paid ? 'checkmo' : 'banktransfer', parent_id: id, shipping_amount: amount(shipping),
      ...(paid ? { amount_paid: amount(grand), base_amount_paid: amount(grand), base_shipping_captured: amount(shipping), shipping_captured: amount(shipping) } : {}),
    },
    status_histories: paid
      ? [{ comment: `Captured amount of ${amount(grand)} ${cur.code} online.`, created_at: updated, entity_id: id, entity_name: 'invoice', is_customer_notified: 0, is_visible_on_front: 0, parent_id: id, status }]
      : [],
    extension_attributes: {
      shipping_assignments: [{ shipping: { ...(virtual ? {} : { address: address('shipping', id * 2 - 1), method: 'flatrate_flatrate' }), total: totals }, items }],
    },
  };
}
