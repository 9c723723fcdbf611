/**
 * Browser code of the widget frame, part 1 (`/widget/v1/frame-core.js`): messages to the host page,
 * calls to the payment API, polling to a terminal status, shopper-safe messages and a DOM helper.
 * Exposes `window.PayFrame` for part 2 (frame.js.ts). Served as this exact string.
 */
import { CURRENCY_EXPONENTS } from '../../core/money/iso4217.js';

export const FRAME_CORE_JS = String.raw`/* PayWidget sandbox frame, /widget/v1 */
(function () {
  'use strict';
  const apiUrl = document.body.getAttribute('data-api-url');
  const parentOrigin = new URLSearchParams(window.location.search).get('origin');
  if (!apiUrl || !parentOrigin || !/^https?:\/\/[^/]+$/.test(parentOrigin)) throw new Error('PayWidget frame: open it through PayWidget.mount');

  // The status values this frame treats as final. Anything else (processing, requires_action, pending, unknown) is polled on.
  const SUCCEEDED = ['succeeded', 'confirmed', 'paid', 'captured'];
  const FAILED = ['declined', 'failed', 'canceled', 'cancelled', 'expired'];
  const MESSAGES = {
    generic_decline: 'Your card was declined. Try another card.',
    unknown_test_card: 'Your card was declined. Try another card.',
    authentication_failed: 'Your bank could not authenticate the card. Try again or use another card.',
    bank_declined: 'Your bank declined the payment.',
    canceled: 'The payment was cancelled.',
    expired: 'The payment expired before it was completed.',
    token_expired: 'This checkout has expired. Reload the page to start again.',
    token_spent: 'This checkout has already been used. Reload the page to start again.',
    invalid_token: 'This checkout is not valid. Reload the page to start again.',
    needs_reconciliation: 'We could not confirm your payment yet. Please do not pay again: the shop will confirm your order once the payment is settled.',
  };

  /** Posts a widget:* message to the host page, and only to its origin. */
  function post(type, fields) {
    window.parent.postMessage(Object.assign({ source: 'pay-widget', type: type }, fields || {}), parentOrigin);
  }

  let lastHeight = 0;
  function reportSize() {
    const height = Math.ceil(document.documentElement.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    post('widget:resize', { height: height });
  }
  new ResizeObserver(reportSize).observe(document.documentElement);

  /**
   * One call to the payment API: { ok, status, data, code, message }; a network failure, or no answer within
   * timeoutMs (default 30 s), gives status 0.
   */
  async function api(method, path, body, bearer, timeoutMs) {
    const headers = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (bearer) headers.authorization = 'Bearer ' + bearer;
    let response;
    let data;
    try {
      // At least 1 ms, at most what a browser timer holds: AbortSignal.timeout throws on Infinity.
      const signal = AbortSignal.timeout(Math.min(Math.max(1, timeoutMs === undefined ? 30000 : timeoutMs), 2147483647));
      response = await fetch(apiUrl + path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store', signal: signal });
      data = await response.json().catch(() => null);
    } catch (error) {
      return { ok: false, status: 0, data: null, code: 'network_error', message: 'Could not reach the payment service. Check your connection and try again.' };
    }
    const error = (data && data.error) || {};
    return { ok: response.ok, status: response.status, data: data, code: error.code, message: error.message };
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  /**
   * Polls GET /api/v1/payments/{id}/status with the payment client token until a final status:
   * { outcome: 'succeeded' } | { outcome: 'failed', code } | { outcome: 'unknown' } once budgetMs runs out
   * or stillWaiting() says the shopper has gone (both mean needsReconciliation).
   */
  async function poll(paymentId, clientToken, budgetMs, stillWaiting) {
    const end = Date.now() + budgetMs;
    let delay = 200;
    for (;;) {
      // Cut off at what is left of the budget: a status call that hangs must not outlast it.
      const r = await api('GET', '/api/v1/payments/' + encodeURIComponent(paymentId) + '/status', undefined, clientToken, end - Date.now());
      const status = r.ok && r.data ? r.data.status : undefined;
      if (SUCCEEDED.includes(status)) return { outcome: 'succeeded' };
      if (FAILED.includes(status)) return { outcome: 'failed', code: r.data.decline_code || status };
      if ((stillWaiting && !stillWaiting()) || Date.now() + delay > end) return { outcome: 'unknown' };
      await sleep(delay);
      delay = Math.min(Math.round(delay * 1.5), 2000);
    }
  }

  function messageFor(code, fallback) {
    return MESSAGES[code] || fallback || 'The payment could not be completed.';
  }

  /** el('button', { class: 'x', text: 'Pay', onclick: fn, type: 'button' }, children) */
  function el(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'text') node.textContent = value;
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children || []) if (child) node.append(child);
    return node;
  }

  // ISO 4217's minor-unit digits: Intl's differ for some (HUF 0 against 2, IQD 0 against 3), and an amount in
  // minor units divided by Intl's would show 100 or 1000 times what is charged.
  const EXPONENTS = ${JSON.stringify(CURRENCY_EXPONENTS)};

  /** Amount in minor units, for display only (the service decided it; the frame never computes with it). */
  function formatAmount(amount, currency) {
    const digits = EXPONENTS[currency];
    if (digits === undefined) return amount + ' ' + currency + ' (minor units)';
    const value = amount / Math.pow(10, digits);
    try {
      return new Intl.NumberFormat(navigator.language || 'en', { style: 'currency', currency: currency, minimumFractionDigits: digits, maximumFractionDigits: digits }).format(value);
    } catch (error) {
      return value.toFixed(digits) + ' ' + currency;
    }
  }

  /** Waits for the loader's widget:init (token, e-mail, return URL), from the parent window and origin only. */
  function init(callback) {
    window.addEventListener('message', function onInit(event) {
      const data = event.data;
      if (event.source !== window.parent || event.origin !== parentOrigin) return;
      if (!data || data.source !== 'pay-widget-host' || data.type !== 'widget:init' || typeof data.widgetToken !== 'string') return;
      window.removeEventListener('message', onInit);
      callback({ widgetToken: data.widgetToken, customerEmail: data.customerEmail, returnUrl: data.returnUrl });
    });
    post('widget:ready');
  }

  window.PayFrame = Object.freeze({ api: api, poll: poll, post: post, el: el, messageFor: messageFor, formatAmount: formatAmount, init: init, reportSize: reportSize });
})();
`;
