import { PayError, type PayErrorCode } from '../errors.js';
import { getHeader } from '../headers.js';
import type { MintInput } from '../payments/mint.js';
import { readJsonBody } from '../request-body.js';
import type { PayRequest } from '../types.js';
import type { CommerceOrder } from '../commerce/schemas.js';

/** The request the merchant's hooks see: the plain request plus its parsed JSON body. */
export type HookRequest = PayRequest & {
  body: unknown;
  /**
   * One header by name (any case), the same in every framework: `headers` is what the framework
   * gave, a Node object in Express, Koa and the Pages Router but a Fetch `Headers` in the App Router.
   */
  header(name: string): string | undefined;
};

/** What the shopper owes for this request, from your own records (never from the browser): `{ amount, currency, orderId }`. */
export type ResolveCheckout = (request: HookRequest) => MintInput | Promise<MintInput>;
/**
 * Return true to let the request through, false to refuse it with 401. Any falsy answer refuses it (a hook
 * that forgets its return keeps the routes closed); a truthy one other than true (a session object, a
 * user id) is a mistake that lets no one in (500 CONFIG_INVALID saying so). You can also throw a PayError
 * to answer with your own code.
 */
export type Authorize = (request: HookRequest) => boolean | Promise<boolean>;
/**
 * For `POST /widget-token` with `{ order_id }` (no resolveCheckout, the commerce platform configured): whether this
 * request may pay this order, typically that it is the signed-in shopper's. True lets the mint go on; false answers
 * 404 ORDER_NOT_FOUND, as for an order that does not exist, so ids cannot be probed. As strict as `authorize`.
 */
export type AuthorizeOrder = (request: HookRequest, order: CommerceOrder) => boolean | Promise<boolean>;

/** What every JSON route needs: the merchant's authorize hook and its body limit. */
export interface JsonRouteDeps {
  authorize: Authorize | undefined;
  maxBodyBytes: number;
}

/** What each hook's failure answers, and how the merchant answers with a code of their own. */
const HOOK_FAILURES = {
  resolveCheckout: {
    code: 'CHECKOUT_UNRESOLVED',
    consequence: 'no widget token was minted',
    own: 'throw a PayError (such as ORDER_NOT_FOUND or ORDER_NOT_PAYABLE) to answer with a code of your own',
  },
  authorizeOrder: {
    code: 'CHECKOUT_UNRESOLVED',
    consequence: 'no widget token was minted',
    own: 'return false to answer 404 ORDER_NOT_FOUND, or throw a PayError to answer with a code of your own',
  },
  authorize: {
    code: 'INTERNAL_ERROR',
    consequence: 'the request was refused',
    own: 'return false to answer 401, or throw a PayError to answer with a code of your own',
  },
} as const satisfies Record<string, { code: PayErrorCode; consequence: string; own: string }>;

/**
 * A merchant's hook threw something other than a PayError (a TypeError in its code, a failed query): 500,
 * naming the hook but telling the browser nothing of the error, which the router logs with this one as its cause.
 */
export function hookThrew(hook: keyof typeof HOOK_FAILURES, error: unknown): PayError {
  const { code, consequence, own } = HOOK_FAILURES[hook];
  return new PayError(code, `The ${hook} hook passed to createPay threw an error, so ${consequence}: see the server log for the error, and fix the hook (${own}).`, {
    cause: error,
    details: { hook },
  });
}

/** The request with its JSON body (parsed when read), once the authorize hook (if any) let it through; else UNAUTHORIZED. */
export async function authorizedRequest({ authorize, maxBodyBytes }: JsonRouteDeps, request: PayRequest): Promise<HookRequest> {
  let body: { value: unknown } | undefined;
  const hookRequest: HookRequest = {
    ...request,
    // Parsed when first read, after authorize at the latest: a request it refuses costs no parse (a deeply
    // nested body of a megabyte takes V8 over 100 ms). A body that cannot be read throws its 400/413/415 there.
    get body() {
      body ??= { value: readJsonBody(request, maxBodyBytes) };
      return body.value;
    },
    header: (name) => getHeader(request.headers, name.toLowerCase()),
    // A spread copies no getter: the Node bridge's signal lives on its prototype, made only when read.
    get signal() {
      return request.signal;
    },
  };
  if (authorize) await letThrough(authorize, hookRequest);
  // Once let through, a body that is not JSON is refused (400) whether or not a hook reads it: a client's bug, not ignored.
  void hookRequest.body;
  return hookRequest;
}

/** Resolves when the authorize hook lets the request through; else UNAUTHORIZED, or CONFIG_INVALID for a verdict that is no boolean. */
async function letThrough(authorize: Authorize, request: HookRequest): Promise<void> {
  const refused = () => new PayError('UNAUTHORIZED', 'The authorize hook refused this request (it returned false): send the session or credentials it checks.');
  await hookVerdict('authorize', () => authorize(request), refused, 'let the request through, or false to refuse it (401)');
}

/**
 * A yes-or-no hook's verdict: true passes, any falsy answer refuses (a hook that forgets its return lets no one in), and
 * a truthy one other than true (a session object, a user id) is a mistake that would let everyone in the day it is a
 * non-empty string: CONFIG_INVALID saying so. A PayError the hook throws on purpose answers as it is.
 */
export async function hookVerdict(hook: 'authorize' | 'authorizeOrder', ask: () => unknown, refused: () => PayError, trueMeans: string): Promise<void> {
  let verdict: unknown;
  try {
    verdict = await ask();
  } catch (error) {
    throw error instanceof PayError ? error : hookThrew(hook, error);
  }
  if (verdict === true) return;
  if (!verdict) throw refused();
  throw new PayError('CONFIG_INVALID', `paywidget-server configuration: the ${hook} hook returned ${Array.isArray(verdict) ? 'an array' : typeof verdict === 'object' ? 'an object' : `a ${typeof verdict}`}; return true to ${trueMeans}.`, { details: { options: [hook] } });
}
