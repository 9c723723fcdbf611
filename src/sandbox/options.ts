import type { CommerceSandboxOptions } from './commerce/types.js';
import type { SandboxOptions } from './payment/types.js';

/** Every option, so that the compiler says when one is added to the types and not here. */
const SANDBOX_OPTIONS = {
  port: true, widgetPort: true, merchantId: true, apiKey: true, webhookSecret: true, webhookUrl: true, now: true, webhookRetry: true,
  duplicateWebhooks: true, confirmDelayMs: true, statusAcceptsMerchantCredentials: true, widgetPollBudgetMs: true, payByBankEligible: true, commerce: true,
} satisfies Record<keyof SandboxOptions, true>;
const RETRY_OPTIONS = { attempts: true, baseDelayMs: true, timeoutMs: true } satisfies Record<keyof NonNullable<SandboxOptions['webhookRetry']>, true>;
const COMMERCE_OPTIONS = {
  port: true, orders: true, seed: true, startDate: true, spreadDays: true, username: true, password: true, tokenLifetimeMs: true,
  lockoutFailures: true, lockoutMs: true, twoFactor: true, lastPageAgain: true, maxPageSize: true, silentPageSizeCap: true,
} satisfies Record<keyof CommerceSandboxOptions, true>;

/**
 * Refuses, before anything listens, what startSandbox would otherwise take without a word: an option it does not
 * have (a misspelt `webhookURL` would leave webhooks unsent) and a port that is not one (a string from the
 * environment would have Node listen on a socket file of that name, and the server never close).
 */
export function checkSandboxOptions(options: unknown): void {
  const object = (value: unknown, name: string): Record<string, unknown> => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`${name} must be an object`);
    return value as Record<string, unknown>;
  };
  const known = (value: Record<string, unknown>, keys: object, name: string) => {
    const unknown = Object.keys(value).filter((key) => !Object.hasOwn(keys, key));
    if (unknown.length > 0) throw new TypeError(`${name} has no option ${unknown.join(', ')}; its options are ${Object.keys(keys).join(', ')}`);
  };
  const top = object(options, 'startSandbox options');
  known(top, SANDBOX_OPTIONS, 'startSandbox');
  if (top.webhookRetry !== undefined) known(object(top.webhookRetry, 'webhookRetry'), RETRY_OPTIONS, 'webhookRetry');
  const commerce = top.commerce === undefined ? {} : object(top.commerce, 'commerce');
  known(commerce, COMMERCE_OPTIONS, 'commerce');
  for (const [name, port] of [['port', top.port], ['widgetPort', top.widgetPort], ['commerce.port', commerce.port]] as const) {
    if (port !== undefined && !(Number.isSafeInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) {
      throw new TypeError(`${name} must be a whole number from 0 to 65535 (0: a free port), got ${typeof port === 'string' ? JSON.stringify(port) : String(port)}${typeof port === 'string' ? ' (read it with Number())' : ''}`);
    }
  }
}
