/**
 * The walkthrough, one step per thing a merchant backend has to get right. Each step does it over real
 * HTTP, checks what it claims, says what happened in a sentence or two and returns a short detail for
 * the summary table. A check that does not hold throws CheckFailed ("expected …, got …").
 */
import { fromMinorUnits, toMinorUnits, type CommerceOrder, type LedgerEntry } from 'paywidget-server';
import { truncateToken } from './output.js';
import { check, CheckFailed } from './run.js';
import { call, describe, errorCode, lookup, mint, payByCard, pollStatus, sequence, spaced, until } from './shopper.js';
import type { DemoStack } from './stack.js';

export interface DemoContext {
  readonly stack: DemoStack;
  /** A sentence about what the step is doing. */
  say(text: string): void;
  /** How long to wait for something that arrives on its own (a webhook) before the check fails. */
  readonly waitMs: number;
  /** Orders (entity_id) earlier steps paid or tried to pay. */
  readonly usedOrders: Set<number>;
  /** What the first card payment left for the steps after it. */
  first?: FirstPayment;
}

/** The order of step 1, paid in steps 2 to 5. */
export interface FirstPayment {
  order: CommerceOrder;
  widgetToken?: string;
  paymentId?: string;
  eventId?: string;
}

export interface Step {
  /** Short name, for the table and for "step N (name) failed". */
  name: string;
  /** The heading printed before the step runs. */
  title: string;
  /** Does the step and returns a one-line detail; throws CheckFailed when something is not as it should be. */
  run(ctx: DemoContext): Promise<string>;
}

const show = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));

function amountOf(order: CommerceOrder): string {
  const currency = order.order_currency_code;
  return `${fromMinorUnits(toMinorUnits(String(order.grand_total), currency), currency)} ${currency}`;
}

function ledgerAmount(entry: LedgerEntry): string {
  if (entry.amount === undefined || entry.currency === undefined) return 'no amount';
  return `${fromMinorUnits(entry.amount, entry.currency)} ${entry.currency}`;
}

/** The next order with status pending that no earlier step used, through `pay.orders.iterate`. */
async function nextOrderAwaitingPayment(ctx: DemoContext): Promise<CommerceOrder> {
  for await (const order of ctx.stack.pay.orders.iterate({ status: 'pending', pageSize: 20 })) {
    if (ctx.usedOrders.has(order.entity_id)) continue;
    ctx.usedOrders.add(order.entity_id);
    return order;
  }
  throw new CheckFailed('expected an order with status pending on the commerce platform, got none left');
}

/** Waits for the sandbox's event about this payment, then for the merchant's handler to have run for it. */
async function webhookHandled(ctx: DemoContext, paymentId: string, type: string): Promise<{ eventId: string }> {
  const { sandbox } = ctx.stack;
  const event = await until(ctx.waitMs, () => sandbox.webhooks.events.find((e) => e.data.payment_id === paymentId && e.type === type));
  check(event, `the payment service to send a ${type} webhook for ${paymentId}`, `none within ${ctx.waitMs} ms`);
  const delivered = await until(ctx.waitMs, () => sandbox.webhooks.delivered.find((d) => d.eventId === event.id && d.ok));
  const tries = sandbox.webhooks.delivered.filter((d) => d.eventId === event.id);
  const where = tries[0]?.url ?? ctx.stack.webhookUrl;
  check(delivered, `the merchant backend to answer ${event.id} with 200 at ${where}`, tries.length ? `answers ${tries.map((d) => d.status ?? d.error ?? 'none').join(', ')}` : `no delivery within ${ctx.waitMs} ms`);
  const runs = ctx.stack.handlerRuns(event.id);
  check(runs === 1, `the merchant's handler to run once for ${event.id}`, `${runs} runs`);
  return { eventId: event.id };
}

async function ledger(ctx: DemoContext, paymentId: string): Promise<LedgerEntry> {
  const entry = await ctx.stack.pay.payments.get(paymentId);
  check(entry, `the ledger to know ${paymentId}`, 'nothing recorded');
  return entry;
}

function expectLedger(entry: LedgerEntry, expected: Partial<LedgerEntry>): void {
  for (const [key, value] of Object.entries(expected)) {
    const got = entry[key as keyof LedgerEntry];
    check(got === value, `the ledger's ${key} for ${entry.paymentId} to be ${show(value)}`, show(got));
  }
}

/** What an earlier step left; a step run out of order says so instead of failing obscurely. */
function needFirst<K extends keyof FirstPayment>(ctx: DemoContext, key: K): FirstPayment & Required<Pick<FirstPayment, K>> {
  const first = ctx.first;
  check(first?.[key] !== undefined, `an earlier step to have left the first payment's ${key}`, 'nothing');
  return first as FirstPayment & Required<Pick<FirstPayment, K>>;
}

// ---- The steps ----------------------------------------------------------------------------------

export const STEPS: Step[] = [
  {
    name: 'pick an order',
    title: 'Pick an order awaiting payment from the commerce platform',
    async run(ctx) {
      const order = await nextOrderAwaitingPayment(ctx);
      check(order.state === 'new' && order.total_due === order.grand_total, `order ${order.increment_id} to be new with its whole total due`, `state ${order.state}, total_due ${order.total_due}`);
      ctx.say(`pay.orders.iterate({ status: 'pending' }) logged in as the shop's admin and searched the orders: the first is`);
      ctx.say(`order ${order.increment_id} (entity_id ${order.entity_id}), placed ${order.created_at} by ${order.customer_email}, ${amountOf(order)} due.`);
      ctx.first = { order };
      return `order ${order.increment_id}, ${amountOf(order)} due`;
    },
  },
  {
    name: 'mint a widget token',
    title: "Mint a widget token through the merchant's route",
    async run(ctx) {
      const first = needFirst(ctx, 'order');
      const { order } = first;
      ctx.say(`The checkout page sends POST /pay/widget-token { "orderId": "${order.entity_id}" }: the order, not the amount.`);
      const { widgetToken, expiresAt } = await mint(ctx, order);
      const minutes = Math.round((Date.parse(expiresAt) - Date.now()) / 60_000);
      check(minutes >= 14 && minutes <= 15, 'the token to expire in 15 minutes', `${expiresAt} (${minutes} min)`);
      ctx.say(`The backend read the order from the commerce platform, asked the payment service for a token with its merchant`);
      ctx.say(`credentials (they never leave the server) and answered ${truncateToken(widgetToken)} (shortened here), valid for 15 minutes.`);
      first.widgetToken = widgetToken;
      return `${truncateToken(widgetToken)} for ${amountOf(order)}, expires in 15 min`;
    },
  },
  {
    name: 'pay by card',
    title: 'Pay with the test card that succeeds',
    async run(ctx) {
      const first = needFirst(ctx, 'widgetToken');
      const { order, widgetToken } = first;
      const { sandbox } = ctx.stack;
      const found = (await lookup(ctx, widgetToken)).body.order as { order_id: string; amount: number; currency: string };
      const owed = toMinorUnits(String(order.grand_total), order.order_currency_code);
      check(found.order_id === order.increment_id && found.amount === owed && found.currency === order.order_currency_code,
        `the token to be for order ${order.increment_id}, ${owed} ${order.order_currency_code}`, show(found));
      ctx.say(`Lookup (what the widget calls on mount; it does not spend the token): order ${found.order_id}, ${found.amount} minor units`);
      ctx.say(`of ${found.currency}, which is what the order says: the amount came from the server, not from the browser.`);
      const payment = await payByCard(ctx, widgetToken, sandbox.testCards.succeeds);
      ctx.say(`Paid with ${spaced(sandbox.testCards.succeeds)} (mobile checkout): payment ${payment.paymentId}.`);
      const { statuses } = await pollStatus(ctx, payment.paymentId, payment.clientToken, 5000);
      check(statuses.at(-1) === 'succeeded', `payment ${payment.paymentId} to reach succeeded`, `${sequence(statuses)}`);
      ctx.say(`Polled its status with the payment client token until it was final: ${sequence(statuses)}.`);
      first.paymentId = payment.paymentId;
      return `succeeded after ${statuses.length} status polls`;
    },
  },
  {
    name: 'webhook',
    title: 'The signed webhook arrives, is verified and recorded',
    async run(ctx) {
      const first = needFirst(ctx, 'paymentId');
      const { order, paymentId } = first;
      const { eventId } = await webhookHandled(ctx, paymentId, 'payment.succeeded');
      first.eventId = eventId;
      ctx.say(`The payment service POSTed event ${eventId} (payment.succeeded) to /pay/webhooks.`);
      ctx.say(`The library checked its HMAC-SHA256 signature over the raw bytes and its timestamp, answered 200,`);
      ctx.say(`and ran the merchant's handler once.`);
      const entry = await ledger(ctx, paymentId);
      expectLedger(entry, { status: 'succeeded', outcome: 'confirmed', source: 'webhook', orderId: order.increment_id });
      ctx.say(`Ledger (pay.payments.get): ${entry.status}, outcome ${entry.outcome}, learned from the webhook, order ${entry.orderId}, ${ledgerAmount(entry)}.`);
      const again = await call('POST', `${ctx.stack.merchantUrl}/pay/widget-token`, { orderId: String(order.entity_id) });
      check(again.status === 409 && errorCode(again) === 'ORDER_NOT_PAYABLE', `a new token for the paid order to be refused with 409 ORDER_NOT_PAYABLE`, describe(again));
      ctx.say(`The handler marked order ${order.increment_id} paid; asking for another token for it now gets 409 ORDER_NOT_PAYABLE.`);
      return 'signature verified, handler ran once, ledger: confirmed';
    },
  },
  {
    name: 'duplicate webhook',
    title: 'A duplicate delivery is answered without running the handler',
    async run(ctx) {
      const { eventId } = needFirst(ctx, 'eventId');
      const original = ctx.stack.sandbox.webhooks.delivered.find((d) => d.eventId === eventId && d.ok);
      check(original, `the sandbox to have recorded the delivery of ${eventId}`, 'none');
      const headers = { 'x-pay-event-id': original.eventId, 'x-pay-timestamp': original.timestamp, 'x-pay-signature': original.signature };
      const answer = await call('POST', ctx.stack.webhookUrl, original.body, headers);
      check(answer.status === 200 && answer.body.duplicate === true, 'the copy to be answered 200 { received: true, duplicate: true }', describe(answer));
      const runs = ctx.stack.handlerRuns(eventId);
      check(runs === 1, `the handler to have run once for ${eventId} in all`, `${runs} runs`);
      ctx.say(`Sent ${eventId} again, byte for byte, as a payment service does when it missed`);
      ctx.say('the first answer.');
      ctx.say(`Answered 200 ${JSON.stringify(answer.body)}; the handler did not run again (1 run in all).`);
      const forged = await call('POST', ctx.stack.webhookUrl, original.body.replace(/"succeeded"/g, '"succeeded" '), headers);
      check(forged.status === 400 && errorCode(forged) === 'WEBHOOK_SIGNATURE_MISMATCH', 'a copy with its body changed to be refused with 400 WEBHOOK_SIGNATURE_MISMATCH', describe(forged));
      ctx.say('A copy with one byte of its body changed is refused: 400 WEBHOOK_SIGNATURE_MISMATCH.');
      return 'duplicate: true, handler still ran once; forged copy refused';
    },
  },
  {
    name: 'declined card',
    title: 'A declined card',
    async run(ctx) {
      const { sandbox } = ctx.stack;
      const order = await nextOrderAwaitingPayment(ctx);
      const { widgetToken } = await mint(ctx, order);
      const payment = await payByCard(ctx, widgetToken, sandbox.testCards.declines);
      const { statuses, last } = await pollStatus(ctx, payment.paymentId, payment.clientToken, 5000);
      check(statuses.at(-1) === 'declined', `payment ${payment.paymentId} to be declined`, sequence(statuses));
      ctx.say(`Order ${order.increment_id} (${amountOf(order)}), paid with ${spaced(sandbox.testCards.declines)}: ${statuses.at(-1)} (${String(last.body.decline_code)}).`);
      await webhookHandled(ctx, payment.paymentId, 'payment.failed');
      const entry = await ledger(ctx, payment.paymentId);
      expectLedger(entry, { status: 'declined', outcome: 'failed', orderId: order.increment_id });
      ctx.say(`The payment.failed webhook was verified and recorded: ledger outcome ${entry.outcome}. The order still awaits payment;`);
      ctx.say('the shopper sees the decline and can try again with a new token.');
      return `declined (${String(last.body.decline_code)}), ledger: failed`;
    },
  },
  {
    name: 'pay by bank',
    title: 'Pay by bank: approved only by the webhook',
    async run(ctx) {
      const { sandbox, merchantUrl, pay } = ctx.stack;
      const order = await nextOrderAwaitingPayment(ctx);
      const { widgetToken } = await mint(ctx, order);
      const offered = (await lookup(ctx, widgetToken)).body.pay_by_bank as { eligible?: boolean } | undefined;
      check(offered?.eligible === true, 'lookup to offer pay by bank', show(offered));
      const returnUrl = `${merchantUrl}/checkout?orderId=${order.entity_id}`;
      const started = await call('POST', `${sandbox.paymentUrl}/api/v1/checkout`, { widget_token: widgetToken, method: 'pay_by_bank', return_url: returnUrl });
      check(started.status === 201 && typeof started.body.redirect_url === 'string', 'the pay-by-bank checkout to answer 201 with a redirect_url', describe(started));
      const paymentId = started.body.payment_id as string;
      ctx.say(`Order ${order.increment_id} (${amountOf(order)}): the shopper chooses pay by bank and is sent to the bank's page.`);
      const back = await pay.payments.status(paymentId, { clientToken: started.body.payment_client_token as string });
      check(back.status === 'pending' && back.outcome === 'unresolved', 'the payment to be pending (unresolved) when the shopper returns', `${back.status} (${back.outcome})`);
      ctx.say(`The shopper comes back to the shop: that is not a success. Status ${back.status}, outcome ${back.outcome}.`);
      const approved = await call('POST', `${sandbox.paymentUrl}/sandbox/bank/${paymentId}/approve`);
      check(approved.status === 200, 'the bank approval to be accepted', describe(approved));
      await webhookHandled(ctx, paymentId, 'payment.succeeded');
      const entry = await ledger(ctx, paymentId);
      expectLedger(entry, { status: 'succeeded', outcome: 'confirmed', source: 'webhook' });
      ctx.say('Later the bank approves; the payment service tells the shop by webhook, and only then is the payment confirmed.');
      return 'pending until the bank approved; confirmed by the webhook';
    },
  },
  {
    name: 'unknown, then reconciled',
    title: 'A payment left unknown, then reconciled',
    async run(ctx) {
      const { sandbox, merchantUrl, webhookUrl, pay } = ctx.stack;
      const order = await nextOrderAwaitingPayment(ctx);
      const { widgetToken } = await mint(ctx, order);
      sandbox.payments.setConfirmDelay(Infinity); // this payment stays processing until the sandbox is told otherwise
      let payment: { paymentId: string; clientToken: string };
      try {
        payment = await payByCard(ctx, widgetToken, sandbox.testCards.succeeds);
      } finally {
        sandbox.payments.setConfirmDelay(ctx.stack.confirmDelayMs);
      }
      const { statuses } = await pollStatus(ctx, payment.paymentId, payment.clientToken, 600);
      check(statuses.at(-1) === 'processing', `payment ${payment.paymentId} to be still processing`, sequence(statuses));
      ctx.say(`Order ${order.increment_id} (${amountOf(order)}), paid with ${spaced(sandbox.testCards.succeeds)}: payment ${payment.paymentId}`);
      ctx.say(`is still ${statuses.at(-1)} when the widget stops polling, so it reports needsReconciliation: true.`);
      ctx.say('The shopper must not be told it failed, nor be charged again.');
      const askedAt = performance.now();
      const asked = await call('POST', `${merchantUrl}/pay/payments/${payment.paymentId}/reconcile`, { payment_client_token: payment.clientToken });
      const askedMs = performance.now() - askedAt;
      check(asked.status === 200 && asked.body.outcome === 'needs_reconciliation', 'POST /pay/payments/:id/reconcile to answer needs_reconciliation', describe(asked));
      // Within its budget: it stops once no poll fits before the deadline, so somewhat before 1 s.
      check(askedMs >= 500 && askedMs < 1_500, 'the reconcile route to poll for its 1 s budget (payments.pollBudgetMs), no longer', `${Math.round(askedMs)} ms`);
      expectLedger(await ledger(ctx, payment.paymentId), { status: 'processing', outcome: 'unresolved', source: 'poll' });
      ctx.say(`The page asks the shop: POST /pay/payments/${payment.paymentId}/reconcile`);
      ctx.say(`polls the payment service for 1 s and answers ${String(asked.body.outcome)}.`);
      const again = await call('POST', `${merchantUrl}/pay/widget-token`, { orderId: String(order.entity_id) });
      check(again.status === 409 && (again.body as { error?: { code?: string } }).error?.code === 'ORDER_NOT_PAYABLE', 'a second token for the order to be refused while its payment may still confirm (409)', describe(again));
      ctx.say(`A second token for order ${order.increment_id} is refused (409 ORDER_NOT_PAYABLE): its payment may yet confirm.`);

      // The service confirms the payment, but its webhook is lost: only the sweep can find out.
      sandbox.setWebhookUrl(undefined);
      try {
        sandbox.payments.setStatus(payment.paymentId, 'succeeded');
        const sweep = await pay.payments.reconcilePending();
        const change = sweep.changed.find((c) => c.paymentId === payment.paymentId);
        check(change?.outcome === 'confirmed', `the sweep to move ${payment.paymentId} to confirmed`, show(sweep));
        ctx.say('Then the payment service confirms it, but its webhook is lost (delivery is switched off for this step).');
        ctx.say(`The scheduled sweep, pay.payments.reconcilePending(), polled the ${sweep.checked} unresolved payment${sweep.checked === 1 ? '' : 's'} in the ledger`);
        ctx.say(`and moved ${payment.paymentId} from ${change.from} to ${change.to}: confirmed.`);
      } finally {
        sandbox.setWebhookUrl(webhookUrl);
      }
      const entry = await ledger(ctx, payment.paymentId);
      expectLedger(entry, { status: 'succeeded', outcome: 'confirmed', source: 'poll' });
      return 'needs_reconciliation, then confirmed by the sweep';
    },
  },
  {
    name: 'order sync',
    title: 'Sync orders by status and date',
    async run(ctx) {
      const { pay, sandbox } = ctx.stack;
      const filter = { status: 'pending', createdFrom: '2025-04-01 00:00:00', createdTo: '2025-06-30 23:59:59' };
      const expected: number[] = [];
      for (let id = 1; id <= sandbox.commerce.orderCount; id++) {
        const order = sandbox.commerce.order(id)!;
        const created = String(order.created_at);
        if (order.status === filter.status && created >= filter.createdFrom && created <= filter.createdTo) expected.push(id);
      }
      const synced: number[] = [];
      const first = await pay.orders.sync({ ...filter, checkpoint: 'demo-pending-q2', pageSize: 5, onOrder: (order) => void synced.push(order.entity_id) });
      check(first.complete && synced.join() === expected.join(), `the orders ${expected.join(', ')}`, synced.join(', ') || 'none');
      ctx.say(`pay.orders.sync({ status: 'pending', createdFrom: '2025-04-01', createdTo: '2025-06-30' }) delivered ${first.delivered} orders`);
      ctx.say(`in ${first.pages} pages of 5, in entity_id order: exactly the ones the platform holds for that filter.`);
      const again: number[] = [];
      const second = await pay.orders.sync({ ...filter, checkpoint: 'demo-pending-q2', pageSize: 5, onOrder: (order) => void again.push(order.entity_id) });
      check(again.length === 0 && second.resumedFrom === expected.at(-1), `the second run to resume after entity_id ${expected.at(-1)} and deliver nothing`, `resumed from ${second.resumedFrom}, ${again.length} orders`);
      ctx.say(`Run again with the same checkpoint, it resumes after entity_id ${second.resumedFrom} and delivers nothing twice.`);
      return `${first.delivered} orders in ${first.pages} pages; rerun resumed, 0 new`;
    },
  },
];
