import type { CommerceOptions, HttpOptions, PaymentOptions } from './config.js';
import { PayError } from './errors.js';
import type { PayOptions } from './pay.js';
import type { PaymentsOptions } from './payments/options.js';
import type { StoreOptions } from './stores/index.js';
import type { WebhookOptions } from './webhooks/options.js';

/** Every key of T, checked by the compiler both ways: a key T gains must be added here. */
const allKeysOf = <T>() => <const K extends readonly (keyof T)[]>(keys: K & ([keyof T] extends [K[number]] ? unknown : 'a key of the options type is missing')): readonly string[] => keys as readonly string[];

const TOP = allKeysOf<PayOptions>()(['payment', 'commerce', 'http', 'env', 'resolveCheckout', 'authorize', 'authorizeOrder', 'logger', 'now', 'maxBodyBytes', 'webhooks', 'stores', 'payments']);
const SECTIONS: Record<string, readonly string[]> = {
  payment: allKeysOf<PaymentOptions>()(['apiUrl', 'merchantId', 'apiKey', 'webhookSecret']),
  commerce: allKeysOf<CommerceOptions>()(['url', 'username', 'password', 'scope', 'readMethod', 'tokenLifetimeMs']),
  http: allKeysOf<HttpOptions>()(['attemptTimeoutMs', 'totalTimeoutMs', 'maxRetries', 'backoffBaseMs', 'backoffMaxMs', 'retryAfterMaxMs', 'transport']),
  webhooks: allKeysOf<WebhookOptions>()(['toleranceSeconds', 'maxBodyBytes', 'retentionMs', 'leaseMs', 'eventType', 'payloadEventId', 'waitUntil']),
  payments: allKeysOf<PaymentsOptions>()(['terminalStatuses', 'statusAuth', 'pollBudgetMs', 'pollIntervalMs', 'pollMaxIntervalMs', 'extractPayment']),
  stores: allKeysOf<StoreOptions>()(['claims', 'checkpoints', 'adminTokens', 'ledger']),
};

/**
 * Refuses an option createPay does not know (CONFIG_INVALID), as a typo in plain JavaScript
 * (`webhook: { leaseMs }`) would otherwise leave the default in force without a word.
 */
export function checkOptionKeys(options: object): void {
  const unknown: string[] = [];
  const known: string[] = [];
  const check = (object: object, keys: readonly string[], section?: string) => {
    const stray = Object.keys(object).filter((key) => !keys.includes(key));
    if (stray.length === 0) return;
    unknown.push(...stray.map((key) => (section ? `${section}.${key}` : key)));
    known.push(`the ${section ?? 'createPay'} options are ${keys.join(', ')}`);
  };
  check(options, TOP);
  for (const [section, keys] of Object.entries(SECTIONS)) {
    const value = (options as Record<string, unknown>)[section];
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) check(value, keys, section);
  }
  if (unknown.length === 0) return;
  throw new PayError('CONFIG_INVALID', `paywidget-server configuration: unknown option ${unknown.join(', ')}; ${known.join('; ')}. Check the spelling.`, {
    details: { options: unknown },
  });
}
