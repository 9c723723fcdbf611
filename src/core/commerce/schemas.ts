import { z } from 'zod';

/**
 * Schemas of the Order Retrieval API's records, following the field tables of the document
 * (section 2). Every object is loose: fields the document never names (`applied_rule_ids`,
 * `parent_item`, `vat_id`, …) are kept as they came. Fields the document says may be absent are
 * optional; so are fields real installations leave out (see the fixtures in test/fixtures/commerce).
 * Required are the fields the library itself relies on: identity, state, money and currency.
 */

const num = z.number();
const int = z.number().int();
const flag = z.literal([0, 1], { error: 'must be 0 or 1' });
const currency = z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter currency code');
const timestamp = z.string().regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/, 'must be a timestamp YYYY-MM-DD HH:MM:SS');

/** `{ a: schema, b: schema }` for every name, each optional. */
function optionalFields<const N extends readonly string[], T extends z.ZodType>(names: N, schema: T): { [K in N[number]]: z.ZodOptional<T> } {
  return Object.fromEntries(names.map((name) => [name, schema.optional()])) as { [K in N[number]]: z.ZodOptional<T> };
}

const ITEM_AMOUNTS = [
  'amount_refunded', 'base_amount_refunded', 'base_discount_amount', 'base_discount_invoiced',
  'base_discount_tax_compensation_amount', 'base_discount_tax_compensation_invoiced', 'base_original_price', 'base_price',
  'base_price_incl_tax', 'base_row_invoiced', 'base_row_total', 'base_row_total_incl_tax', 'base_tax_amount',
  'base_tax_invoiced', 'discount_amount', 'discount_invoiced', 'discount_percent', 'discount_tax_compensation_amount',
  'discount_tax_compensation_invoiced', 'original_price', 'price', 'price_incl_tax', 'row_invoiced', 'row_total',
  'row_total_incl_tax', 'row_weight', 'tax_amount', 'tax_invoiced', 'tax_percent', 'weight',
  'qty_canceled', 'qty_invoiced', 'qty_refunded', 'qty_shipped',
] as const;

/** An order item, in `items` and in `extension_attributes.shipping_assignments[].items`. */
export const orderItemSchema = z.looseObject({
  item_id: int,
  sku: z.string(),
  qty_ordered: num,
  name: z.string().optional(),
  product_type: z.string().optional(),
  order_id: int.optional(),
  product_id: int.optional(),
  quote_item_id: int.optional(),
  store_id: int.optional(),
  parent_item_id: int.optional(),
  weee_tax_applied: z.string().optional(),
  created_at: timestamp.optional(),
  updated_at: timestamp.optional(),
  ...optionalFields(['free_shipping', 'is_qty_decimal', 'is_virtual', 'no_discount'], flag),
  ...optionalFields(ITEM_AMOUNTS, num),
  /** An object, or an empty array when there is nothing (PHP's empty array). */
  extension_attributes: z.union([z.looseObject({ platform_placement_id: z.string().optional() }), z.array(z.never())]).optional(),
});

/** `billing_address`, and `extension_attributes.shipping_assignments[].shipping.address`. */
export const addressSchema = z.looseObject({
  address_type: z.string(),
  city: z.string(),
  country_id: z.string().regex(/^[A-Z]{2}$/, 'must be a 2-letter country code'),
  email: z.string().nullish(),
  firstname: z.string(),
  lastname: z.string(),
  postcode: z.string().nullish(),
  street: z.array(z.string()),
  // The document says string; real installations send null for a telephone nobody entered.
  telephone: z.string().nullish(),
  region: z.string().nullish(),
  region_code: z.string().nullish(),
  company: z.string().nullish(),
  entity_id: int.optional(),
  parent_id: int.optional(),
  customer_address_id: int.nullish(),
  region_id: int.nullish(),
});

/** The `payment` record of an order. */
export const paymentSchema = z.looseObject({
  method: z.string(),
  entity_id: int.optional(),
  parent_id: int.optional(),
  account_status: z.string().nullish(),
  additional_information: z.array(z.string()).nullish(),
  cc_last4: z.string().nullish(),
  cc_exp_year: z.string().optional(),
  cc_ss_start_month: z.string().optional(),
  cc_ss_start_year: z.string().optional(),
  ...optionalFields([
    'amount_ordered', 'amount_paid', 'base_amount_ordered', 'base_amount_paid', 'base_shipping_amount',
    'base_shipping_captured', 'shipping_amount', 'shipping_captured',
  ], num),
  extension_attributes: z.union([z.array(z.unknown()), z.looseObject({})]).optional(),
});

/** One entry of `status_histories` (which may be empty). */
export const statusHistorySchema = z.looseObject({
  comment: z.string().nullable().optional(),
  created_at: timestamp.optional(),
  entity_id: int.optional(),
  parent_id: int.optional(),
  entity_name: z.string().optional(),
  is_customer_notified: flag.nullish(),
  is_visible_on_front: flag.optional(),
  status: z.string().nullish(),
});

const SHIPPING_TOTALS = [
  'base_shipping_amount', 'base_shipping_discount_amount', 'base_shipping_incl_tax', 'base_shipping_invoiced',
  'base_shipping_tax_amount', 'shipping_amount', 'shipping_discount_amount', 'shipping_discount_tax_compensation_amount',
  'shipping_incl_tax', 'shipping_invoiced', 'shipping_tax_amount',
] as const;

/** The order's `extension_attributes`. */
export const orderExtensionAttributesSchema = z.looseObject({
  shipping_assignments: z.array(z.looseObject({
    shipping: z.looseObject({
      address: addressSchema.optional(),
      method: z.string().nullish(),
      total: z.looseObject(optionalFields(SHIPPING_TOTALS, num)).optional(),
    }),
    items: z.array(orderItemSchema),
  })).optional(),
  items: z.array(orderItemSchema).optional(),
  platform_order_id: z.string().optional(),
  platform_partner_id: z.string().optional(),
  platform_geo_lat: z.string().optional(),
  platform_geo_long: z.string().optional(),
});

const ORDER_AMOUNTS = [
  'base_discount_amount', 'base_discount_invoiced', 'base_discount_tax_compensation_amount',
  'base_discount_tax_compensation_invoiced', 'base_shipping_amount', 'base_shipping_discount_amount', 'base_shipping_incl_tax',
  'base_shipping_invoiced', 'base_shipping_tax_amount', 'base_subtotal', 'base_subtotal_incl_tax', 'base_subtotal_invoiced',
  'base_tax_amount', 'base_tax_invoiced', 'base_total_due', 'base_total_invoiced', 'base_total_invoiced_cost',
  'base_total_paid', 'base_to_global_rate', 'base_to_order_rate', 'store_to_base_rate', 'store_to_order_rate',
  'discount_amount', 'discount_invoiced', 'discount_tax_compensation_amount', 'discount_tax_compensation_invoiced',
  'shipping_amount', 'shipping_discount_amount', 'shipping_discount_tax_compensation_amount', 'shipping_incl_tax',
  'shipping_invoiced', 'shipping_tax_amount', 'subtotal', 'subtotal_incl_tax', 'subtotal_invoiced', 'tax_amount',
  'tax_invoiced', 'total_due', 'total_invoiced', 'total_paid', 'total_qty_ordered', 'weight',
] as const;

/** One order record (`GET /V1/orders/{id}`, and each of a search's `items`). */
export const orderSchema = z.looseObject({
  entity_id: int.positive(),
  increment_id: z.string().min(1),
  state: z.string(),
  status: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  grand_total: num,
  base_grand_total: num,
  order_currency_code: currency,
  base_currency_code: currency,
  customer_email: z.string(),
  items: z.array(orderItemSchema),
  ...optionalFields(ORDER_AMOUNTS, num),
  ...optionalFields(['billing_address_id', 'customer_group_id', 'customer_id', 'quote_id', 'store_id', 'total_item_count'], int),
  ...optionalFields(['customer_is_guest', 'customer_note_notify', 'email_sent', 'is_virtual'], flag),
  ...optionalFields(['global_currency_code', 'store_currency_code'], currency),
  ...optionalFields(['customer_firstname', 'customer_lastname', 'protect_code', 'shipping_description', 'store_name'], z.string()),
  billing_address: addressSchema.optional(),
  payment: paymentSchema.optional(),
  status_histories: z.array(statusHistorySchema).optional(),
  extension_attributes: orderExtensionAttributesSchema.optional(),
});

const searchFilterSchema = z.looseObject({
  field: z.string(),
  value: z.string(),
  condition_type: z.string().optional(),
});

/** The `search_criteria` a search echoes: only what was sent. */
export const searchCriteriaSchema = z.looseObject({
  filter_groups: z.array(z.looseObject({ filters: z.array(searchFilterSchema) })),
  sort_orders: z.array(z.looseObject({ field: z.string(), direction: z.string() })).optional(),
  page_size: int.optional(),
  current_page: int.optional(),
});

/** The list result of `GET /V1/orders?searchCriteria…`. */
export const orderSearchResultSchema = z.looseObject({
  items: z.array(orderSchema),
  search_criteria: searchCriteriaSchema,
  total_count: int.nonnegative(),
});

/** Fields the document names have these types; any other field the platform sends is kept as `unknown`. */
type Loose<T> = T & Record<string, unknown>;
/** An order line, as the platform sends it. */
export type CommerceOrderItem = Loose<z.output<typeof orderItemSchema>>;
/** A billing or shipping address. */
export type CommerceAddress = Loose<z.output<typeof addressSchema>>;
/** The order's payment record on the platform (method, amounts). */
export type CommercePayment = Loose<z.output<typeof paymentSchema>>;
/** One comment of the order's status history. */
export type CommerceStatusHistory = Loose<z.output<typeof statusHistorySchema>>;
/** An order as `pay.orders` reads it, validated against the document's field tables; unknown fields are kept. */
export type CommerceOrder = Loose<z.output<typeof orderSchema>>;
/** The search the platform says it ran (its echo of what was sent). */
export type CommerceSearchCriteria = Loose<z.output<typeof searchCriteriaSchema>>;
/** One page of an order search. */
export interface CommerceSearchResult {
  /** The orders of this page, entity_id ascending. */
  items: CommerceOrder[];
  /** The platform's echo of the search, checked against what was sent. */
  search_criteria: CommerceSearchCriteria;
  /** Orders matching the filter across every page. */
  total_count: number;
  [key: string]: unknown;
}
