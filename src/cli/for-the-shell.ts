import { PASS_OR_SET_VARIABLE, SET_OR_PASS_OPTION } from '../core/config.js';
import { RAISE_ATTEMPT_TIMEOUT, RAISE_TOTAL_TIMEOUT } from '../core/http.js';

/** The core's advice names createPay() and its options; at a shell only the environment configures the command. */
export function forTheShell(message: string): string {
  return message
    .replace(SET_OR_PASS_OPTION, 'Export the variable, or set it for one run: NAME=value paywidget ….')
    .replace(PASS_OR_SET_VARIABLE, 'Correct the variable in the environment, or set it for one run: NAME=value paywidget ….')
    .replace(RAISE_ATTEMPT_TIMEOUT, 'Check that it is up; if it is only slow, run the command again later.')
    .replace(RAISE_TOTAL_TIMEOUT, 'If it is only slow, run the command again later.');
}
