import { PayError, toPayError, type PayErrorCode } from '../errors.js';
import { getHeader } from '../headers.js';
import { checkMintInput, type MintInput } from '../payments/mint.js';
import type { WidgetToken } from '../payments/widget-token.js';
import { jsonResponse } from '../json-response.js';
import { readJsonBody } from '../request-body.js';
import type { Route } from '../router.js';
import type { PayRequest } from '../types.js';

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

/** What every JSON route needs: the merchant's authorize hook and its body limit. */
export interface JsonRouteDeps {
  authorize: Authorize | undefined;
  maxBodyBytes: number;
}

export interface WidgetTokenRouteDeps extends JsonRouteDeps {
  resolveCheckout: ResolveCheckout | undefined;
  /**
   * True when resolveCheckout is the merchant's own hook, false when it is the library's (the commerce
   * platform's order resolver): what the hook throws is then blamed on the hook, not on the library.
   */
  merchantResolveCheckout: boolean;
  mint: (input: MintInput) => Promise<WidgetToken>;
}

/** `POST /widget-token`: the server decides the amount (resolveCheckout), never the browser. */
export function widgetTokenRoute(deps: WidgetTokenRouteDeps): Route {
  return {
    method: 'POST',
    path: '/widget-token',
    async handler(request) {
      const hookRequest = await authorizedRequest(deps, request);
      if (!deps.resolveCheckout) {
        throw new PayError('CHECKOUT_UNRESOLVED', 'POST /widget-token needs to know what the shopper owes: pass createPay({ resolveCheckout: (request) => ({ amount, currency, orderId }) }), reading the amount from your own records, never from the browser; or configure the commerce platform (COMMERCE_URL, COMMERCE_USERNAME, COMMERCE_PASSWORD) and send { order_id }.');
      }
      const checkout = await resolveCheckoutFor(deps.resolveCheckout, deps.merchantResolveCheckout, hookRequest);
      const token = await deps.mint(checkout);
      return jsonResponse(200, { widget_token: token.widgetToken, expires_at: token.expiresAt.toISOString() });
    },
  };
}

/**
 * What the shopper owes, as resolveCheckout decided it. Its server-side failures (the commerce platform
 * refusing the admin login, unreachable, misconfigured) keep their code and status but reach the shopper
 * without details such as the admin user or an internal address: those stay in the cause, which the
 * router logs with the 5xx. An unusable answer is the hook's fault, not the browser's: 500
 * CHECKOUT_UNRESOLVED, not 400.
 */
async function resolveCheckoutFor(resolveCheckout: ResolveCheckout, isMerchantHook: boolean, request: HookRequest): Promise<MintInput> {
  let checkout: MintInput;
  try {
    checkout = await resolveCheckout(request);
  } catch (error) {
    throw checkoutFailure(error, isMerchantHook);
  }
  try {
    return checkMintInput(checkout);
  } catch (error) {
    throw new PayError('CHECKOUT_UNRESOLVED', `resolveCheckout returned no usable checkout: ${(error as Error).message}`, { cause: error, details: toPayError(error).details });
  }
}

/** What the shopper is answered when resolveCheckout threw `error`. */
function checkoutFailure(error: unknown, isMerchantHook: boolean): unknown {
  // The library's own resolver failing unexpectedly stays the library's INTERNAL_ERROR.
  if (!(error instanceof PayError)) return isMerchantHook ? hookThrew('resolveCheckout', error) : error;
  if (isMerchantHook && isAmountConversionError(error)) {
    // toMinorUnits (or mintWidgetToken) refusing the amount or currency the hook took from the merchant's own records:
    // the hook's bug, which a 400 would blame on the browser and leave out of the log.
    return new PayError('CHECKOUT_UNRESOLVED', `resolveCheckout threw INVALID_INPUT converting the order's amount: ${error.message}. The amount and currency come from your own records, never from the browser: fix the values resolveCheckout passes to toMinorUnits.`, {
      cause: error,
      details: { hook: 'resolveCheckout', ...error.details },
    });
  }
  if (error.status < 500 || error.code === 'INTERNAL_ERROR') return error;
  return new PayError(error.code, 'What this order costs could not be read from the merchant\'s systems; the details are in the server log.', { status: error.status, cause: error });
}

/**
 * An INVALID_INPUT about the amount or currency thrown inside resolveCheckout. No field of the browser's
 * body is called that (the widget-token route never takes an amount from the browser: its body names
 * the order), so it comes from converting or checking the amount of the merchant's own records:
 * toMinorUnits (details.field 'amount' or 'currency'), or mintWidgetToken's own check of its input.
 */
function isAmountConversionError(error: PayError): boolean {
  const field = error.details?.field;
  return error.code === 'INVALID_INPUT' && (field === 'amount' || field === 'currency');
}

/** What each hook's failure answers, and how the merchant answers with a code of their own. */
const HOOK_FAILURES = {
  resolveCheckout: {
    code: 'CHECKOUT_UNRESOLVED',
    consequence: 'no widget token was minted',
    own: 'throw a PayError (such as ORDER_NOT_FOUND or ORDER_NOT_PAYABLE) to answer with a code of your own',
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
function hookThrew(hook: keyof typeof HOOK_FAILURES, error: unknown): PayError {
  const { code, consequence, own } = HOOK_FAILURES[hook];
  return new PayError(code, `The ${hook} hook passed to createPay threw an error, so ${consequence}: see the server log for the error, and fix the hook (${own}).`, {
    cause: error,
    details: { hook },
  });
}

/** The request with its JSON body, once the authorize hook (if any) let it through; else UNAUTHORIZED. */
export async function authorizedRequest({ authorize, maxBodyBytes }: JsonRouteDeps, request: PayRequest): Promise<HookRequest> {
  const hookRequest: HookRequest = {
    ...request,
    body: readJsonBody(request, maxBodyBytes),
    header: (name) => getHeader(request.headers, name.toLowerCase()),
    // A spread copies no getter: the Node bridge's signal lives on its prototype, made only when read.
    get signal() {
      return request.signal;
    },
  };
  if (!authorize) return hookRequest;
  let verdict: unknown;
  try {
    verdict = await authorize(hookRequest);
  } catch (error) {
    // A PayError the hook throws on purpose (UNAUTHORIZED, or a code of the merchant's choosing) answers as it is.
    throw error instanceof PayError ? error : hookThrew('authorize', error);
  }
  if (verdict === true) return hookRequest;
  if (!verdict) throw new PayError('UNAUTHORIZED', 'The authorize hook refused this request (it returned false): send the session or credentials it checks.');
  // A session object or a user id would let everyone in the day it is a non-empty string by mistake: say so, let no one in.
  throw new PayError('CONFIG_INVALID', `paywidget-server configuration: the authorize hook returned ${Array.isArray(verdict) ? 'an array' : typeof verdict === 'object' ? 'an object' : `a ${typeof verdict}`}; return true to let the request through, or false to refuse it (401).`, { details: { options: ['authorize'] } });
}
