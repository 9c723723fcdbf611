import { z } from 'zod';
import { PayError } from './errors.js';
import { MAX_TIMER_MS } from './max-timer.js';
import { Secret } from './secret.js';

/** The environment variable each option falls back to; error messages name both. */
const ENV_NAMES: Record<string, string> = {
  'payment.apiUrl': 'PAY_API_URL',
  'payment.merchantId': 'PAY_MERCHANT_ID',
  'payment.apiKey': 'PAY_MERCHANT_API_KEY',
  'payment.webhookSecret': 'PAY_WEBHOOK_SECRET',
  'commerce.url': 'COMMERCE_URL',
  'commerce.username': 'COMMERCE_USERNAME',
  'commerce.password': 'COMMERCE_PASSWORD',
  'commerce.scope': 'COMMERCE_SCOPE',
  'commerce.readMethod': 'COMMERCE_READ_METHOD',
};

/** The payment service's credentials. Each falls back to its environment variable, named below. */
export interface PaymentOptions {
  /** The service's base URL, without `/api/v1` (the library adds the paths). Env: `PAY_API_URL`. */
  apiUrl?: string | undefined;
  /** Sent as `X-Merchant-Id` with the API key: when minting, and on a status call made without the payment's client token. Env: `PAY_MERCHANT_ID`. */
  merchantId?: string | undefined;
  /** The merchant API key: server-side only, never in a response, log or error. Env: `PAY_MERCHANT_API_KEY`. */
  apiKey?: string | undefined;
  /** One signing secret, or several while rotating (any one verifies). Env: `PAY_WEBHOOK_SECRET`, comma-separated. */
  webhookSecret?: string | string[] | undefined;
}

/** The commerce platform (Magento-style REST). `url`, `username` and `password` together turn it on. */
export interface CommerceOptions {
  /** The store's base URL, without `/rest` (the library adds `/rest/<scope>/V1/…`). Env: `COMMERCE_URL`. */
  url?: string | undefined;
  /** The admin user the library gets its admin token for. Env: `COMMERCE_USERNAME`. */
  username?: string | undefined;
  /** That admin user's password: never in a response, log or error. Env: `COMMERCE_PASSWORD`. */
  password?: string | undefined;
  /** The store view in `/rest/<scope>/V1/…`; `'default'` by default. Env: `COMMERCE_SCOPE`. */
  scope?: string | undefined;
  /**
   * How order reads are sent: `'GET'` (default, what real platforms serve) or `'POST'`, as the interface
   * document shows, for installations that need it. Env: `COMMERCE_READ_METHOD`.
   */
  readMethod?: 'GET' | 'POST' | undefined;
  /** How long the platform's admin tokens live (4 hours by default, Magento's `admin_token_lifetime`). */
  tokenLifetimeMs?: number | undefined;
}

/** How the library calls the payment service and the commerce platform: time-outs and retries. */
export interface HttpOptions {
  /** Time-out of one attempt, response body included (10 s by default). */
  attemptTimeoutMs?: number | undefined;
  /** Deadline for a whole call, retries and back-off included (30 s by default). */
  totalTimeoutMs?: number | undefined;
  /** Retries after the first attempt, on connection errors, time-outs, 5xx and 429 (0 to 10; 2 by default). */
  maxRetries?: number | undefined;
  /** The first retry waits a random time up to this long, each next one up to twice as long (100 ms by default). */
  backoffBaseMs?: number | undefined;
  /** The ceiling of that doubling wait (2 s by default); a `Retry-After` is honoured up to `retryAfterMaxMs` instead. */
  backoffMaxMs?: number | undefined;
  /** The longest `Retry-After` honoured (10 s by default); a longer one ends the retries. */
  retryAfterMaxMs?: number | undefined;
  /**
   * `'auto'` (default): `node:http` on Node, `fetch` elsewhere. `'fetch'`: always fetch, e.g. when your
   * egress goes through undici's global dispatcher (a ProxyAgent) or your tests intercept it with MockAgent.
   */
  transport?: 'auto' | 'fetch' | undefined;
}

export interface ConfigOptions {
  /** The payment service's URL, merchant credentials and webhook signing secrets; each falls back to its environment variable. */
  payment?: PaymentOptions | undefined;
  /** The commerce platform the orders are read from; each falls back to its environment variable. */
  commerce?: CommerceOptions | undefined;
  /** Time-outs and retries of every outbound call. */
  http?: HttpOptions | undefined;
  /** Where fallbacks are read from; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

const required = (what: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? 'is missing' : `must be ${what}`),
});
const text = z.string(required('a non-empty string')).trim().min(1, 'must not be empty');
// A password is sent as it is, spaces at either end included: trimmed, a right one would be refused (and the refusal remembered).
const password = z.string(required('a non-empty string')).min(1, 'must not be empty').refine((value) => value.trim() !== '', 'must not be only whitespace');
// fetch refuses a URL with credentials in an error that quotes it whole, password included.
const withoutCredentials = (value: string) => {
  try {
    const { username, password } = new URL(value);
    return username === '' && password === '';
  } catch {
    return true; // not a URL at all ('127.0.0.1:3000'): z.url has said so, and zod runs this check anyway
  }
};
/** An http(s) URL without credentials; `example` is the kind of URL the option takes, for its message. */
const httpUrl = (example: string) => z
  .url({ protocol: /^https?$/, ...required(`an http(s) URL such as ${example}`) })
  .refine(withoutCredentials, 'must not carry a user name or password (user:password@): the library sends its own credentials')
  // The library appends its paths: after a ?query or #fragment they would land in it, and every call would reach '/'.
  .refine((value) => !/[?#]/.test(value), `must not carry a query or fragment (?… or #…): the library appends its own paths, e.g. ${example}`);
// Node fires a longer timer after 1 ms: a time-out would end every call at once, a pause would spin.
export const positiveMs = z.number(required('a whole number of milliseconds, such as 5000 (not "5s")'))
  .int('must be a whole number of milliseconds')
  .positive('must be more than 0 ms')
  .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} ms (about 24.8 days), the longest timer Node keeps`);
// Sent in an HTTP header: a line break or other control character would make the request fail before it
// is sent, and fetch's error names the value, which would then reach the logs.
const headerText = text.regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces or line breaks (it is sent in an HTTP header)');

/**
 * A base URL as the library keeps it: scheme and host in lower case, no default port, no trailing slash. One platform
 * spelled two ways (HTTP://Shop.example) is then one: one admin token, one refusal chain, one checkpoint source.
 */
export function baseUrl(value: string): string {
  const url = new URL(value);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/** The path of a URL, or '' when it is not one (z.url has said so). */
const pathOf = (value: string) => {
  try {
    return new URL(value).pathname;
  } catch {
    return '';
  }
};
// The library adds /api/v1/… and /rest/<scope>/V1/…: a base URL that has them already reaches no route.
const paymentBase = httpUrl('https://pay.example.com').refine((value) => !/\/api\/v\d+(\/|$)/i.test(pathOf(value)), 'must be the payment service\'s base URL, without /api/v1 (the library adds the paths), e.g. https://pay.example.com');
const commerceBase = httpUrl('https://shop.example.com').refine((value) => !/\/rest(\/|$)/i.test(pathOf(value)), 'must be the store\'s base URL, without /rest or /rest/<scope>/V1 (the library adds them; the scope is COMMERCE_SCOPE), e.g. https://shop.example.com');

// Each payment option is checked when given, but may be missing at createPay: Next.js evaluates route
// modules during `next build`, where secrets are usually absent. The feature that needs a missing
// option throws CONFIG_MISSING naming it (requirePayment, requireWebhookSecrets).
const paymentSchema = z.object({
  apiUrl: paymentBase.optional(),
  merchantId: headerText.optional(),
  apiKey: headerText.optional(),
  webhookSecret: z.union([text, z.array(text).min(1)], required('a string or an array of strings')).optional(),
});

const commerceSchema = z.object({
  url: commerceBase,
  username: text,
  password,
  scope: text.default('default'),
  readMethod: z.enum(['GET', 'POST'], { error: () => "must be 'GET' or 'POST'" }).default('GET'),
  tokenLifetimeMs: positiveMs.default(4 * 60 * 60_000),
});

const httpSchema = z.object({
  attemptTimeoutMs: positiveMs.default(10_000),
  totalTimeoutMs: positiveMs.default(30_000),
  maxRetries: z.number(required('a whole number from 0 to 10')).int('must be a whole number from 0 to 10').min(0, 'must be a whole number from 0 to 10').max(10, 'must be a whole number from 0 to 10').default(2),
  backoffBaseMs: positiveMs.default(100),
  backoffMaxMs: positiveMs.default(2_000),
  retryAfterMaxMs: z.number(required('a whole number of milliseconds, 0 or more')).int('must be a whole number of milliseconds').min(0, 'must be 0 or more').default(10_000),
  transport: z.enum(['auto', 'fetch'], { error: () => "must be 'auto' or 'fetch'" }).default('auto'),
});

export type HttpPolicy = z.output<typeof httpSchema>;

export interface PaymentConfig {
  apiUrl: string;
  merchantId: string;
  apiKey: Secret;
}

export interface CommerceConfig {
  url: string;
  username: string;
  password: Secret;
  scope: string;
  readMethod: 'GET' | 'POST';
  tokenLifetimeMs: number;
}

/** The options once checked, environment fallbacks applied; secrets are held so that nothing prints them. */
export interface ResolvedConfig {
  /** Undefined while apiUrl, merchantId or apiKey is missing; requirePayment() names what is. */
  payment: PaymentConfig | undefined;
  /** Empty while no signing secret is set; requireWebhookSecrets() says so. */
  webhookSecrets: Secret[];
  /** Options that are not set, e.g. 'payment.apiKey'. */
  missing: string[];
  /** Absent while the platform's url, username or password is missing; requireCommerce() names what is. */
  commerce: CommerceConfig | undefined;
  /** The commerce options that are not set, e.g. 'commerce.password' (all three when none is). */
  commerceMissing: string[];
  /** The outbound call policy, defaults filled in. */
  http: HttpPolicy;
}

/** Validates the options once, environment fallbacks applied; throws CONFIG_INVALID naming option and variable. */
export function resolveConfig(options: ConfigOptions = {}): ResolvedConfig {
  const fromEnv = envReader(options);

  const payment = parseSection('payment', paymentSchema, {
    apiUrl: options.payment?.apiUrl ?? fromEnv('PAY_API_URL'),
    merchantId: options.payment?.merchantId ?? fromEnv('PAY_MERCHANT_ID'),
    apiKey: options.payment?.apiKey ?? fromEnv('PAY_MERCHANT_API_KEY'),
    webhookSecret: options.payment?.webhookSecret ?? fromEnv('PAY_WEBHOOK_SECRET')?.split(','),
  });

  const { commerce, commerceMissing, http } = resolveCommerceConfig(options);
  const missing = (['apiUrl', 'merchantId', 'apiKey', 'webhookSecret'] as const).filter((k) => payment[k] === undefined).map((k) => `payment.${k}`);
  const { apiUrl, merchantId, apiKey, webhookSecret } = payment;
  return {
    payment: apiUrl && merchantId && apiKey ? { apiUrl: baseUrl(apiUrl), merchantId, apiKey: new Secret(apiKey) } : undefined,
    webhookSecrets: (webhookSecret === undefined ? [] : [webhookSecret].flat()).map((s) => new Secret(s)),
    missing,
    commerce,
    commerceMissing,
    http,
  };
}

/** Reads one environment fallback; an empty variable counts as unset. */
function envReader(options: ConfigOptions): (name: string) => string | undefined {
  const env = options.env ?? globalThis.process?.env ?? {};
  return (name) => (env[name] === '' ? undefined : env[name]);
}

/** The payment-service credentials, or CONFIG_MISSING naming each missing option and its variable. */
export function requirePayment(config: ResolvedConfig): PaymentConfig {
  if (config.payment) return config.payment;
  throw missingOptions(config.missing.filter((o) => o !== 'payment.webhookSecret'), 'to call the payment service');
}

export function requireWebhookSecrets(config: ResolvedConfig): Secret[] {
  if (config.webhookSecrets.length > 0) return config.webhookSecrets;
  throw missingOptions(['payment.webhookSecret'], 'to verify webhooks');
}

/** The commerce platform's settings, or CONFIG_MISSING naming each missing option and its variable. */
export function requireCommerce(config: Pick<ResolvedConfig, 'commerce' | 'commerceMissing'>, purpose = 'to read orders'): CommerceConfig {
  if (config.commerce) return config.commerce;
  throw missingOptions(config.commerceMissing, purpose);
}

/** The advice that ends a CONFIG_MISSING message; the CLI, where only the environment configures, replaces it. */
export const SET_OR_PASS_OPTION = 'Set the environment variable, or pass the option to createPay().';

/** The advice that ends a CONFIG_INVALID message about a value from the environment; the CLI replaces it too. */
export const PASS_OR_SET_VARIABLE = 'Pass it to createPay() or set the environment variable.';

/** An option as errors name it to be changed: `PAY_API_URL (payment.apiUrl)`. */
export function variableAndOption(option: string): string {
  return `${ENV_NAMES[option]} (${option})`;
}

/** CONFIG_MISSING naming each option and its environment variable. */
export function missingOptions(options: string[], purpose: string): PayError {
  const named = options.map((o) => `${o} (environment variable ${ENV_NAMES[o]})`).join(', ');
  return new PayError('CONFIG_MISSING', `paywidget-server needs ${named} ${purpose}. ${SET_OR_PASS_OPTION}`, { details: { options } });
}

/** What a commerce platform cannot do without. */
export const COMMERCE_REQUIRED = ['url', 'username', 'password'] as const;

/**
 * The commerce section alone (with the HTTP policy), for tools that only read orders (the CLI).
 * `commerce` is undefined while its url, username or password is missing (`commerceMissing` names them):
 * only the order features need it, and they say so when first used. A value that is there but malformed
 * is refused at once (CONFIG_INVALID).
 */
export function resolveCommerceConfig(options: ConfigOptions = {}): { commerce: CommerceConfig | undefined; commerceMissing: string[]; http: HttpPolicy } {
  const fromEnv = envReader(options);
  const input = {
    ...options.commerce,
    url: options.commerce?.url ?? fromEnv('COMMERCE_URL'),
    username: options.commerce?.username ?? fromEnv('COMMERCE_USERNAME'),
    // A value read from a file (a mounted secret) often ends in a line break that is no part of it; a file saved
    // with CRLF line endings and read line by line (docker --env-file) leaves its CR alone.
    password: options.commerce?.password ?? fromEnv('COMMERCE_PASSWORD')?.replace(/\r?\n$|\r$/, ''),
    scope: options.commerce?.scope ?? fromEnv('COMMERCE_SCOPE'),
    readMethod: options.commerce?.readMethod ?? fromEnv('COMMERCE_READ_METHOD'),
  };
  const commerceMissing = COMMERCE_REQUIRED.filter((k) => input[k] === undefined).map((k) => `commerce.${k}`);
  // What is there is checked now, whatever is missing (a malformed URL is a mistake either way).
  const parsed = parseSection('commerce', commerceSchema.partial({ url: true, username: true, password: true }), input);
  return {
    commerce: commerceMissing.length === 0 ? { ...parsed, url: baseUrl(parsed.url!), username: parsed.username!, password: new Secret(parsed.password!) } : undefined,
    commerceMissing,
    http: parseSection('http', httpSchema, options.http ?? {}),
  };
}

/** One section of the options checked against its schema, or CONFIG_INVALID naming each option at fault (and its variable). */
export function parseSection<S extends z.ZodType>(section: string, schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw configInvalid(section, result.error.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: issue.message })));
}

/** CONFIG_INVALID for problems found in one section; messages name the option and its variable but never echo the value (it may be a secret). */
export function configInvalid(section: string, problems: ReadonlyArray<{ path: string; message: string }>): PayError {
  const options = problems.map((p) => (p.path === '' ? section : `${section}.${p.path}`));
  const described = problems.map((p, i) => {
    const envName = ENV_NAMES[options[i]!.replace(/\.\d+$/, '')];
    return `${envName ? `${options[i]} (environment variable ${envName})` : options[i]} ${p.message}`;
  });
  const fix = described.some((p) => p.includes('environment variable')) ? ` ${PASS_OR_SET_VARIABLE}` : '';
  return new PayError('CONFIG_INVALID', `paywidget-server configuration: ${described.join('; ')}.${fix}`, { details: { options } });
}
