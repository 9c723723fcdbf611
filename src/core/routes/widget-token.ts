import { PayError, toPayError } from '../errors.js';
import { checkMintInput, type MintInput } from '../payments/mint.js';
import type { WidgetToken } from '../payments/widget-token.js';
import { jsonResponse } from '../json-response.js';
import type { Route } from '../router.js';
import { authorizedRequest, hookThrew, type HookRequest, type JsonRouteDeps, type ResolveCheckout } from './hooks.js';

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
    maxBodyBytes: deps.maxBodyBytes,
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
