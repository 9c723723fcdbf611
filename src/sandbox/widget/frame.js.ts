/**
 * Browser code of the widget frame, part 2 (`/widget/v1/frame.js`): the screens. Lookup on init; a new
 * card form (3DS challenge shown in the frame when the issuer asks), saved cards (with remove and
 * set-default, whose failures stay inline) and pay by bank when the lookup offers them; every payment is
 * polled to a final status before anything is reported. Served as this exact string.
 */
export const FRAME_JS = String.raw`/* PayWidget sandbox frame screens, /widget/v1 */
(function () {
  'use strict';
  const { api, poll, post, el, messageFor, formatAmount, init } = window.PayFrame;
  // A card payment without a challenge; the sandbox's widgetPollBudgetMs sets it for tests.
  const CARD_BUDGET_MS = document.body.hasAttribute('data-poll-budget-ms') ? Number(document.body.getAttribute('data-poll-budget-ms')) : 30000;
  const SHOPPER_BUDGET_MS = 10 * 60000; // while the shopper completes a 3DS challenge or the bank page
  const BANK_CLOSED_GRACE_MS = 5000; // bank window closed and still pending this long: abandoned
  const BRANDS = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express' };
  const root = document.getElementById('app');
  let checkout; // { widgetToken, customerEmail, returnUrl }
  let lookup; // the lookup answer
  let networkFailedCheckout = false; // a checkout call may have reached the service without us hearing back

  function show(...nodes) {
    root.replaceChildren(...nodes);
  }

  function busy(text, extra) {
    show(el('div', { class: 'screen busy', role: 'status' }, [el('div', { class: 'spinner' }), el('p', { text: text }), extra]));
  }

  function succeed(paymentId) {
    show(el('div', { class: 'screen success' }, [
      el('h2', { text: 'Payment successful' }),
      el('p', { class: 'muted', text: 'Reference ' + paymentId }),
      el('button', { type: 'button', class: 'primary', text: 'Continue to shop', onclick: () => post('widget:continue-to-shop') }),
    ]));
    post('widget:success', { paymentId: paymentId });
  }

  function fail(message, code, needsReconciliation, paymentId) {
    show(el('div', { class: 'screen failure', role: 'alert' }, [el('h2', { text: needsReconciliation ? 'Payment not confirmed yet' : 'Payment failed' }), el('p', { text: message })]));
    post('widget:failure', { message: message, code: code, needsReconciliation: needsReconciliation, paymentId: paymentId });
  }

  /** Polls the payment to a final status, then reports it. */
  async function settle(paymentId, clientToken, budgetMs, stillWaiting) {
    const result = await poll(paymentId, clientToken, budgetMs, stillWaiting);
    if (result.outcome === 'succeeded') succeed(paymentId);
    else if (result.outcome === 'failed') fail(messageFor(result.code), result.code, false, paymentId);
    else fail(messageFor('needs_reconciliation'), 'needs_reconciliation', true, paymentId);
  }

  /** A checkout call answered with an error: inline when the token is still good, otherwise the end. */
  function checkoutRefused(r, form) {
    if (r.status === 0 || r.status === 422 || r.status === 429 || r.status >= 500) {
      if (r.status === 0 || r.status >= 500) networkFailedCheckout = true;
      return form(r.status === 422 ? r.message : messageFor(r.code, 'The payment service is unavailable. Try again in a moment.'));
    }
    // Spent after a call we never heard back from: a payment may exist, so do not invite a second one.
    const unknown = r.code === 'token_spent' && networkFailedCheckout;
    fail(unknown ? messageFor('needs_reconciliation') : messageFor(r.code, r.message), r.code, unknown);
  }

  function parseExpiry(text) {
    const match = /^\s*(\d{1,2})\s*\/\s*(\d{2}|\d{4})\s*$/.exec(text);
    if (!match) return null;
    const year = Number(match[2]);
    return { exp_month: Number(match[1]), exp_year: year < 100 ? 2000 + year : year };
  }

  async function payWithCard(values) {
    const expiry = parseExpiry(values.expiry);
    if (!expiry) return showForm('Enter the expiry date as MM/YY.');
    busy('Processing payment…');
    const card = { number: values.number.replace(/[\s-]/g, ''), exp_month: expiry.exp_month, exp_year: expiry.exp_year, cvc: values.cvc.trim() };
    const r = await api('POST', '/api/v1/mobile/checkout', { widget_token: checkout.widgetToken, card: card });
    if (!r.ok) return checkoutRefused(r, showForm);
    const { payment_id: paymentId, payment_client_token: clientToken, provider_params: provider } = r.data;
    const action = provider && provider.next_action;
    if (action && action.type === 'three_d_secure' && action.url) {
      show(el('div', { class: 'screen challenge' }, [
        el('p', { text: 'Your bank asks you to confirm this payment.' }),
        el('iframe', { class: 'challenge-frame', title: '3-D Secure challenge', src: action.url }),
      ]));
      return settle(paymentId, clientToken, SHOPPER_BUDGET_MS);
    }
    return settle(paymentId, clientToken, CARD_BUDGET_MS);
  }

  async function payWithSavedCard(card) {
    busy('Processing payment…');
    const r = await api('POST', '/api/v1/checkout', { widget_token: checkout.widgetToken, saved_payment_method_id: card.id });
    if (!r.ok) return checkoutRefused(r, showForm);
    return settle(r.data.payment_id, r.data.payment_client_token, CARD_BUDGET_MS);
  }

  /**
   * Pay by bank: the bank page opens in a new window; its outcome reaches the service by webhook, so the
   * frame polls (the shopper's return proves nothing). A window closed with the payment still pending, or
   * the budget running out, ends in needsReconciliation.
   */
  async function payByBank() {
    const bankWindow = window.open('', '_blank'); // opened on the click itself, or popup blockers step in
    busy('Connecting to your bank…');
    const r = await api('POST', '/api/v1/checkout', { widget_token: checkout.widgetToken, method: 'pay_by_bank', return_url: checkout.returnUrl });
    if (!r.ok) {
      if (bankWindow) bankWindow.close();
      return checkoutRefused(r, showForm);
    }
    const redirectUrl = r.data.redirect_url;
    if (bankWindow) {
      bankWindow.opener = null;
      bankWindow.location.href = redirectUrl;
    }
    busy('Approve the payment in the window of your bank. This page updates by itself.', el('a', { href: redirectUrl, target: '_blank', rel: 'noopener', text: 'Open your bank again' }));
    let closedSince = 0;
    const stillWaiting = () => {
      if (!bankWindow || !bankWindow.closed) return true;
      closedSince = closedSince || Date.now();
      return Date.now() - closedSince < BANK_CLOSED_GRACE_MS;
    };
    return settle(r.data.payment_id, r.data.payment_client_token, SHOPPER_BUDGET_MS, stillWaiting);
  }

  async function changeSavedCards(method, path, notice) {
    const r = await api(method, path, { widget_token: checkout.widgetToken });
    if (r.ok && r.data && Array.isArray(r.data.saved_cards)) lookup.saved_cards = r.data.saved_cards;
    // A failure here is shown inline and never fails the payment.
    showForm(undefined, r.ok ? undefined : notice + (r.message ? ': ' + r.message : '.'));
  }

  function savedCardList(savedError) {
    const cards = lookup.saved_cards || [];
    if (cards.length === 0 && !savedError) return null;
    const items = cards.map((card) => el('li', { class: 'saved-card' }, [
      el('button', { type: 'button', class: 'secondary', text: 'Pay with ' + (BRANDS[card.brand] || card.brand) + ' •••• ' + card.last4 + (card.is_default ? ' (default)' : ''), onclick: () => payWithSavedCard(card) }),
      card.is_default ? null : el('button', { type: 'button', class: 'link', text: 'Make default', onclick: () => changeSavedCards('POST', '/api/v1/payment-methods/' + encodeURIComponent(card.id) + '/set-default', 'Could not change the default card') }),
      el('button', { type: 'button', class: 'link', text: 'Remove', onclick: () => changeSavedCards('DELETE', '/api/v1/saved-payment-methods/' + encodeURIComponent(card.id), 'Could not remove the card') }),
    ]));
    return el('section', { class: 'saved' }, [el('h3', { text: 'Saved cards' }), el('ul', {}, items), savedError ? el('p', { class: 'error', role: 'alert', text: savedError }) : null]);
  }

  let formValues = { number: '', expiry: '', cvc: '' };

  function cardForm(error) {
    const fields = (lookup.card_fields && lookup.card_fields.fields) || [];
    const inputs = {};
    const rows = ['number', 'expiry', 'cvc'].map((name) => {
      const spec = fields.find((f) => f.name === name) || { label: name };
      inputs[name] = el('input', { id: 'card-' + name, name: name, autocomplete: spec.autocomplete, inputmode: 'numeric', required: true, value: formValues[name] });
      return el('label', { for: 'card-' + name }, [el('span', { text: spec.label }), inputs[name]]);
    });
    const onsubmit = (event) => {
      event.preventDefault();
      formValues = { number: inputs.number.value, expiry: inputs.expiry.value, cvc: inputs.cvc.value };
      payWithCard(formValues);
    };
    return el('form', { class: 'card-form', novalidate: true, onsubmit: onsubmit }, [
      el('h3', { text: 'Card' }), ...rows,
      error ? el('p', { class: 'error', role: 'alert', text: error }) : null,
      el('button', { type: 'submit', class: 'primary', text: 'Pay ' + formatAmount(lookup.order.amount, lookup.order.currency) }),
    ]);
  }

  function showForm(error, savedError) {
    const bank = lookup.pay_by_bank && lookup.pay_by_bank.eligible
      ? el('section', { class: 'bank' }, [el('button', { type: 'button', class: 'secondary', text: 'Pay by bank', onclick: payByBank })])
      : null;
    show(el('div', { class: 'screen form' }, [
      el('p', { class: 'order', text: 'Order ' + lookup.order.order_id + ' · ' + formatAmount(lookup.order.amount, lookup.order.currency) }),
      savedCardList(savedError), cardForm(error), bank,
      el('button', { type: 'button', class: 'link cancel', text: 'Cancel', onclick: () => post('widget:cancel') }),
    ]));
  }

  init(async (given) => {
    checkout = given;
    const r = await api('POST', '/api/v1/checkout/lookup', { widget_token: checkout.widgetToken, customer_email: checkout.customerEmail || undefined });
    if (!r.ok || !r.data || !r.data.order) return fail(messageFor(r.code, 'This checkout could not be loaded. Reload the page to try again.'), r.code || 'lookup_failed', false);
    lookup = r.data;
    showForm();
  });
  busy('Loading…');
})();
`;
