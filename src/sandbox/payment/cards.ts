import { ApiError, invalid } from '../shared/http.js';

/** The sandbox's test card numbers: one succeeds, one asks for 3DS, one is declined. */
export const TEST_CARDS = Object.freeze({
  succeeds: '4242424242424242',
  requires3ds: '4000002760003184',
  declines: '4000000000000002',
});

export type CardOutcome = 'succeeds' | 'requires_3ds' | 'declines' | 'unknown';

export function cardOutcome(number: string): CardOutcome {
  if (number === TEST_CARDS.succeeds) return 'succeeds';
  if (number === TEST_CARDS.requires3ds) return 'requires_3ds';
  if (number === TEST_CARDS.declines) return 'declines';
  return 'unknown';
}

export function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

export function brandOf(number: string): string {
  if (number.startsWith('4')) return 'visa';
  if (/^(5[1-5]|2[2-7])/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  return 'unknown';
}

export interface CardInput {
  number: string;
  exp_month: number;
  exp_year: number;
  cvc: string;
}

/** Validates `card` of a mobile checkout body (422 `invalid_request` naming the field). */
export function parseCard(value: unknown, nowMs: number): CardInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid('card', 'is required and must be an object');
  const card = value as Record<string, unknown>;
  const number = typeof card.number === 'string' ? card.number.replace(/[\s-]/g, '') : undefined;
  if (number === undefined || !/^\d{12,19}$/.test(number)) throw invalid('card.number', 'must be a string of 12 to 19 digits');
  if (!luhnValid(number)) throw invalid('card.number', 'is not a valid card number (Luhn check)');
  const month = card.exp_month;
  if (typeof month !== 'number' || !Number.isInteger(month) || month < 1 || month > 12) throw invalid('card.exp_month', 'must be an integer from 1 to 12');
  const year = card.exp_year;
  if (typeof year !== 'number' || !Number.isInteger(year) || year < 2000 || year > 2100) throw invalid('card.exp_year', 'must be a four-digit year');
  const now = new Date(nowMs);
  if (year < now.getUTCFullYear() || (year === now.getUTCFullYear() && month < now.getUTCMonth() + 1)) {
    throw invalid('card.exp_year', 'and card.exp_month are in the past (the card has expired)');
  }
  const cvcLength = brandOf(number) === 'amex' ? 4 : 3;
  if (typeof card.cvc !== 'string' || !new RegExp(`^\\d{${cvcLength}}$`).test(card.cvc)) throw invalid('card.cvc', `must be a string of ${cvcLength} digits`);
  return { number, exp_month: month, exp_year: year, cvc: card.cvc };
}

/** The card field configuration the lookup answers. */
export const CARD_FIELDS = Object.freeze({
  accepted_brands: ['visa', 'mastercard', 'amex'],
  fields: [
    { name: 'number', label: 'Card number', autocomplete: 'cc-number', required: true },
    { name: 'expiry', label: 'Expiry (MM/YY)', autocomplete: 'cc-exp', required: true },
    { name: 'cvc', label: 'Security code', autocomplete: 'cc-csc', required: true },
  ],
  require_postal_code: false,
  three_d_secure: 'when_required',
  test_mode: true,
});

export interface SavedCard {
  id: string;
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  is_default: boolean;
}

/** The seeded shopper, who has two saved cards. */
export const TEST_SHOPPER_EMAIL = 'shopper@example.com';

/** Shoppers with stored cards, keyed by lower-case e-mail; seeded with one shopper and two cards. */
export class ShopperStore {
  private readonly shoppers = new Map<string, SavedCard[]>();

  constructor(nowMs: number) {
    const year = new Date(nowMs).getUTCFullYear() + 3;
    this.shoppers.set(TEST_SHOPPER_EMAIL, [
      { id: 'pm_sandbox_visa_4242', brand: 'visa', last4: '4242', exp_month: 12, exp_year: year, is_default: true },
      { id: 'pm_sandbox_mastercard_4444', brand: 'mastercard', last4: '4444', exp_month: 6, exp_year: year, is_default: false },
    ]);
  }

  static normalize(email: unknown): string | undefined {
    return typeof email === 'string' && email.trim() !== '' ? email.trim().toLowerCase() : undefined;
  }

  /** The e-mail if that shopper has stored cards. */
  known(email: string | undefined): string | undefined {
    return email !== undefined && (this.shoppers.get(email)?.length ?? 0) > 0 ? email : undefined;
  }

  cards(email: string | undefined): SavedCard[] {
    return email === undefined ? [] : (this.shoppers.get(email) ?? []).map((card) => ({ ...card }));
  }

  /** 404 `payment_method_not_found` unless the shopper bound to the token has this card. */
  find(email: string | undefined, id: string): SavedCard {
    const card = email === undefined ? undefined : this.shoppers.get(email)?.find((c) => c.id === id);
    if (!card) throw new ApiError(404, 'payment_method_not_found', 'No saved payment method with this id for this shopper.');
    return card;
  }

  remove(email: string | undefined, id: string): SavedCard[] {
    const card = this.find(email, id);
    const cards = this.shoppers.get(email!)!.filter((c) => c !== card);
    if (card.is_default && cards[0]) cards[0].is_default = true;
    this.shoppers.set(email!, cards);
    return this.cards(email);
  }

  setDefault(email: string | undefined, id: string): SavedCard[] {
    const card = this.find(email, id);
    for (const c of this.shoppers.get(email!)!) c.is_default = c === card;
    return this.cards(email);
  }
}
