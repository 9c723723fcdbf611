import type { RequestHandler } from 'express';
import { PayError, widgetScriptTag, type Pay, type WidgetScriptTagOptions } from 'paywidget-server';

/**
 * The checkout page: loads the widget from its own host (script tag with integrity), asks this backend
 * for a widget token (`fetchWidgetToken` → POST /pay/widget-token, the amount decided here), mounts the
 * widget and shows what it reports. The widget host, its integrity and the API URL come from the options,
 * else from PAY_WIDGET_HOST, PAY_WIDGET_INTEGRITY and PAY_API_URL.
 */
export function checkoutPage(options: Omit<WidgetScriptTagOptions, 'nonce'> = {}): RequestHandler {
  return (req, res) => {
    // A CSP nonce must be new for every response, so it comes from the middleware that sets the policy
    // (res.locals.cspNonce, as in helmet's guide), never from options fixed once per app.
    const nonce = typeof res.locals.cspNonce === 'string' && res.locals.cspNonce !== '' ? res.locals.cspNonce : undefined;
    let scriptTag: string;
    try {
      // async: a widget host that hangs leaves this page shown (and saying so), not blank.
      scriptTag = widgetScriptTag({ ...options, nonce, async: true });
    } catch (error) {
      const message = error instanceof PayError ? error.message : 'The widget script tag could not be built.';
      res.status(500).type('text/plain').send(`${message}\n`);
      return;
    }
    const orderId = typeof req.query.orderId === 'string' && req.query.orderId !== '' ? req.query.orderId : '1001';
    // A demo shortcut: in your shop, the signed-in shopper's e-mail from the session, never from the URL,
    // where anyone could type someone else's and be offered their saved cards.
    const customerEmail = typeof req.query.email === 'string' && req.query.email !== '' ? req.query.email : null;
    res.set('cache-control', 'no-store').type('html').send(page(scriptTag, { orderId, customerEmail }, nonce));
  };
}

/**
 * Where the bank sends the shopper back after pay by bank (the widget's `returnUrl`). It mounts no widget: a
 * page that minted again would offer a second payment. What it says follows the shop's own record of the order
 * (`isPaid`), then what the ledger knows of its payments: the bank's answer reaches this backend by webhook,
 * maybe after the shopper, and a payment the ledger holds as confirmed may not pay the order (one too small).
 * In your shop, show it only to the shopper the order is theirs (the session), as for the reconcile route.
 */
export function returnPage(pay: Pay, isPaid: (orderId: string) => boolean): RequestHandler {
  return async (req, res, next) => {
    const orderId = typeof req.query.orderId === 'string' ? req.query.orderId : '';
    let entries: Awaited<ReturnType<Pay['payments']['byOrder']>>;
    try {
      entries = orderId === '' ? [] : await pay.payments.byOrder(orderId);
    } catch (error) {
      return next(error); // the ledger store is down: the error handler answers
    }
    const order = `order <strong>${escapeHtml(orderId)}</strong>`;
    const checkout = `/checkout?orderId=${encodeURIComponent(orderId)}`;
    const said = orderId !== '' && isPaid(orderId)
      ? `Your payment for ${order} is confirmed. Thank you!`
      : entries.some((entry) => entry.outcome !== 'failed')
        ? `We are confirming the payment for ${order} and will e-mail you; there is no need to pay again.`
        : entries.length > 0
          ? `The payment for ${order} did not go through. <a href="${checkout}">Back to the checkout</a>`
          : `We have not heard from your bank yet about ${order}. If you approved the payment, we will e-mail you once it is confirmed; if you declined it, <a href="${checkout}">go back to the checkout</a>.`;
    res.set('cache-control', 'no-store').type('html').send(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your payment</title></head>
<body>
<main>
  <h1>Your payment</h1>
  <p>${said}</p>
</main>
</body>
</html>
`);
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside an inline <script> (no "</script>" can close it early). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function page(scriptTag: string, checkout: { orderId: string; customerEmail: string | null }, nonce: string | undefined): string {
  // The page's own <style> and <script> carry the nonce too: a policy with one blocks every inline element without it.
  const nonceAttribute = nonce === undefined ? '' : ` nonce="${escapeHtml(nonce)}"`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Checkout · order ${escapeHtml(checkout.orderId)}</title>
<style${nonceAttribute}>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f8; color: #1a1a2e; }
  main { max-width: 440px; margin: 40px auto; padding: 0 16px; }
  #outcome:empty { display: none; }
  #outcome { padding: 12px 14px; border-radius: 8px; background: #fff; border-left: 4px solid #888; }
  #outcome[data-state="succeeded"], #outcome[data-state="done"] { border-color: #137333; }
  #outcome[data-state="failed"], #outcome[data-state="error"] { border-color: #b00020; }
</style>
${scriptTag}
</head>
<body>
<main>
  <h1>Checkout</h1>
  <p>Order <strong>${escapeHtml(checkout.orderId)}</strong></p>
  <div id="pay-widget"></div>
  <p id="outcome" role="status" aria-live="polite"></p>
  <button id="retry" type="button" hidden>Try again</button>
</main>
<script${nonceAttribute}>
  const checkout = ${scriptJson(checkout)};
  const outcome = document.getElementById('outcome');
  const retry = document.getElementById('retry');

  // What a shopper is told when the token could not be had: the server's messages are written for the shop's
  // operator (settings, time-outs), and go to the console. A 409 is an order paid or being paid: no retry.
  class CheckoutError extends Error {
    constructor(message, canRetry) {
      super(message);
      this.canRetry = canRetry;
    }
  }

  // The merchant backend decides the amount and mints the token; the browser only names the order.
  async function fetchWidgetToken(orderId) {
    const response = await fetch('/pay/widget-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orderId }) }).catch(() => null);
    const body = response ? await response.json().catch(() => null) : null;
    if (response && response.ok && body && typeof body.widget_token === 'string') return body.widget_token;
    console.warn('widget token not minted:', response ? response.status : 'no answer', body && body.error ? body.error.code + ': ' + body.error.message : '');
    if (response && response.status === 409) throw new CheckoutError('Order ' + orderId + ' is paid, or has a payment that may still be confirmed: please do not pay again.', false);
    if (response && (response.status === 401 || response.status === 403)) throw new CheckoutError('Please sign in again to pay for this order.', false);
    throw new CheckoutError('The payment could not be started. Please try again in a moment.', true);
  }

  // Tells the backend of a payment the widget reported: the ledger then holds it under its order even when the
  // webhook is late, so a reload or the back button cannot offer a second payment. keepalive: it is sent even as
  // the shopper leaves the page.
  function report(paymentId) {
    return fetch('/pay/payments/' + encodeURIComponent(paymentId) + '/reconcile', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', keepalive: true }).catch(() => null);
  }

  // Tells the backend of the payment whose outcome the widget could not tell: once the payment service has
  // named its order, the ledger refuses a second payment for it (a reload of this page) until that one has
  // failed, and the answer may already say how it ended. Whatever it says, this page never offers to pay again
  // while the outcome is unknown.
  async function reconcile(paymentId) {
    const response = await report(paymentId);
    const body = response && response.ok ? await response.json().catch(() => null) : null;
    if (body && body.outcome === 'confirmed') show('Payment ' + paymentId + ' confirmed.', 'succeeded');
    if (body && body.outcome === 'failed') {
      show('The payment did not go through; you can try again.', 'failed');
      retry.hidden = false;
    }
    if (!body || body.outcome === 'needs_reconciliation') show('We are confirming your payment ' + paymentId + ' and will e-mail you the outcome. Please do not pay again.', 'pending');
    outcome.dataset.reconciled = body ? body.outcome : 'unknown';
  }

  function show(text, state) {
    outcome.textContent = text;
    outcome.dataset.state = state;
  }

  async function start() {
    show('', 'loading');
    retry.hidden = true;
    // The script did not load or run (its integrity no longer matches, a CSP without frame-src and script-src for the
    // widget host, a network error): say so, before a token is minted for a widget that cannot use it.
    if (typeof PayWidget === 'undefined') {
      show('The payment widget could not be loaded. Please try again in a moment.', 'error');
      retry.hidden = false;
      return;
    }
    let widgetToken;
    try {
      widgetToken = await fetchWidgetToken(checkout.orderId);
    } catch (error) {
      show(error.message, 'error');
      retry.hidden = !error.canRetry;
      return;
    }
    const widget = PayWidget.mount('#pay-widget', {
      widgetToken,
      customerEmail: checkout.customerEmail || undefined,
      // Back from the bank to a page that mounts no widget: not this one, which would offer a second payment.
      returnUrl: new URL('/checkout/return?orderId=' + encodeURIComponent(checkout.orderId), location.href).href,
      onSuccess: ({ paymentId }) => {
        outcome.dataset.paymentId = paymentId;
        show('Payment ' + paymentId + ' confirmed.', 'succeeded');
        report(paymentId);
      },
      onContinueToShop: () => show('Thank you! Your payment for order ' + checkout.orderId + ' is confirmed.', 'done'),
      onFailure: ({ message, needsReconciliation, paymentId }) => {
        // needsReconciliation: the outcome is unknown; never say it failed, never offer to pay again.
        if (paymentId) outcome.dataset.paymentId = paymentId;
        show(message, needsReconciliation ? 'pending' : 'failed');
        retry.hidden = needsReconciliation;
        if (needsReconciliation && paymentId) reconcile(paymentId);
      },
      onCancel: () => {
        show('Checkout cancelled.', 'cancelled');
        retry.hidden = false;
      },
    });
    if (!widget) return show('The payment widget could not be mounted.', 'error');
    // A frame that never speaks (a Content-Security-Policy without frame-src for the widget host, a host that
    // hangs) would leave an empty box: without a word from it within 10 s, the page says so and offers a retry.
    let heard = false;
    const listen = (event) => {
      if (event.data && event.data.source === 'pay-widget') heard = true;
    };
    window.addEventListener('message', listen);
    setTimeout(() => {
      window.removeEventListener('message', listen);
      if (heard) return;
      widget.unmount();
      console.warn('the payment widget frame sent no message within 10 s: check frame-src in the Content-Security-Policy, and the widget host');
      show('The payment form could not be shown. Please try again in a moment.', 'error');
      retry.hidden = false;
    }, 10000);
  }

  retry.addEventListener('click', start);
  // The widget script loads async: start once it ran, or failed (start then says so), or after 10 s of nothing.
  const loader = document.querySelector('script[src$="/widget/v1/paywidget.js"]');
  if (typeof PayWidget !== 'undefined' || !loader) {
    start();
  } else {
    let started = false;
    const startOnce = () => {
      if (started) return;
      started = true;
      start();
    };
    loader.addEventListener('load', startOnce);
    loader.addEventListener('error', startOnce);
    show('Loading the payment form…', 'loading');
    setTimeout(startOnce, 10000);
  }
</script>
</body>
</html>
`;
}
