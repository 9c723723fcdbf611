import { PASS_OR_SET_VARIABLE, SET_OR_PASS_OPTION } from '../core/config.js';
import { RAISE_ATTEMPT_TIMEOUT, RAISE_TOTAL_TIMEOUT } from '../core/http.js';
import { CLIENT_TOKEN_ONLY } from '../core/payments/status.js';

/** The core's advice names createPay() and its options; at a shell only the environment configures the command. */
export function forTheShell(message: string): string {
  return message
    .replace(SET_OR_PASS_OPTION, 'Export the variable, or set it for one run: NAME=value paywidget ….')
    .replace(PASS_OR_SET_VARIABLE, 'Correct the variable in the environment, or set it for one run: NAME=value paywidget ….')
    .replace(RAISE_ATTEMPT_TIMEOUT, 'Check that it is up; if it is only slow, run the command again later.')
    .replace(RAISE_TOTAL_TIMEOUT, 'If it is only slow, run the command again later.')
    .replace(CLIENT_TOKEN_ONLY, "If they mint tokens, this payment service accepts only the payment's payment_client_token on the status endpoint, which this command does not have: the payment's webhook settles it, or your server's reconcile route, which the page calls with the token.");
}
