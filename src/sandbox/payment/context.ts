import type { FaultSet } from './faults.js';
import type { PaymentStore } from './payments.js';
import type { ShopperStore } from './cards.js';
import type { TokenStore } from './tokens.js';

/** Everything the route handlers share. */
export interface SandboxContext {
  readonly merchantId: string;
  readonly apiKey: string;
  readonly payByBankEligible: boolean;
  readonly statusAcceptsMerchantCredentials: boolean;
  readonly now: () => number;
  readonly tokens: TokenStore;
  readonly shoppers: ShopperStore;
  readonly payments: PaymentStore;
  readonly faults: FaultSet;
  /** `http://127.0.0.1:<port>`, known once listening. */
  baseUrl(): string;
}
