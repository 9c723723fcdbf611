/**
 * `npm run demo`: the whole job of a merchant backend, on this machine. Starts the sandbox (payment
 * service, commerce platform, widget host) and the Express example in this process, walks through a
 * payment from order to ledger and a few things that go wrong, prints a summary, and exits 0 when
 * every step did what it should (1 otherwise, naming the step).
 * `npm run demo -- --serve` then keeps everything running and prints the checkout page's address.
 */
import { parseArgs } from 'node:util';
import { fromMinorUnits, toMinorUnits } from 'paywidget-server';
import { createOutput, type Output } from './output.js';
import { printSummary, runSteps } from './run.js';
import { spaced } from './shopper.js';
import { startDemoStack, type DemoStack } from './stack.js';
import { STEPS, type DemoContext } from './steps.js';

const HELP = `Usage: npm run demo [-- --serve [--port N]]

Runs a merchant backend (examples/express) against the embedded sandbox and walks through a payment:
order, widget token, card payment, webhook, duplicate, decline, pay by bank, reconciliation, order sync.
Exit code 0 when every step did what it should, 1 when one did not, 2 for a bad option.

Options:
  --serve     after the walkthrough, keep everything running and print the checkout page's address
  --port N    port of the merchant backend with --serve (default: any free port)
  -h, --help  this help`;

function parseOptions(argv: string[]): { serve: boolean; port: number; help: boolean } | string {
  try {
    const { values } = parseArgs({ args: argv, options: { serve: { type: 'boolean' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true });
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) return `--port must be a port number (got ${values.port}).`;
    if (values.port !== undefined && !values.serve) return '--port goes with --serve.';
    return { serve: values.serve === true, port, help: values.help === true };
  } catch (error) {
    return (error as Error).message;
  }
}

function intro(out: Output, stack: DemoStack): void {
  const { sandbox } = stack;
  out.line(out.bold('paywidget-server demo'));
  out.line("A shop's backend (the Express example, with this library mounted on /pay) takes payments through the");
  out.line('embedded sandbox: a fake payment service and a fake commerce platform. Everything runs in this process on');
  out.line('127.0.0.1; nothing goes to the network. The API key and webhook secret stay inside the process.');
  out.line();
  out.table(['service', 'address', 'role'], [
    ['payment service', sandbox.paymentUrl, `merchant ${sandbox.merchantId}; test cards, signed webhooks`],
    ['commerce platform', sandbox.commerceUrl, `Magento 2 REST, ${sandbox.commerce.orderCount} generated orders`],
    ['widget host', sandbox.widgetUrl, 'PayWidget.mount for the checkout page'],
    ['merchant backend', stack.merchantUrl, 'POST /pay/widget-token, POST /pay/webhooks, /checkout'],
  ]);
}

async function serve(out: Output, stack: DemoStack, used: ReadonlySet<number>): Promise<void> {
  const { sandbox, pay } = stack;
  let order;
  for await (const candidate of pay.orders.iterate({ status: 'pending' })) {
    if (candidate.state === 'new' && candidate.order_currency_code === 'EUR' && !used.has(candidate.entity_id)) {
      order = candidate;
      break;
    }
  }
  const amount = order ? `${fromMinorUnits(toMinorUnits(String(order.grand_total), 'EUR'), 'EUR')} EUR` : '';
  out.line();
  out.line(out.bold('Serving until Ctrl-C'));
  out.table(['what', 'address'], [
    ['checkout page', order ? `${stack.merchantUrl}/checkout?orderId=${order.entity_id}   (order ${order.increment_id}, ${amount})` : `${stack.merchantUrl}/checkout?orderId=<entity_id>`],
    ['saved cards', `add &email=${sandbox.testShopper.email} to the address`],
    ['payment service', sandbox.paymentUrl],
    ['commerce platform', sandbox.commerceUrl],
    ['widget host', sandbox.widgetUrl],
  ]);
  out.line();
  out.line(`Test cards (any future expiry, any 3-digit CVC): ${spaced(sandbox.testCards.succeeds)} succeeds, ${spaced(sandbox.testCards.requires3ds)} asks for`);
  out.line(`3DS, ${spaced(sandbox.testCards.declines)} is declined. Other orders: ?orderId=<entity_id> of any order with status pending.`);
  out.line('Webhooks the shop receives are printed below.');
  stack.onHandled(({ id, type, payload }) => {
    const data = (payload as { data?: { payment_id?: string; order_id?: string } }).data ?? {};
    out.line(`webhook ${id}: ${type ?? '(no type)'} for payment ${data.payment_id ?? '?'}, order ${data.order_id ?? '?'}: verified, recorded, handled`);
  });
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  out.line('Stopping.');
}

async function main(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (typeof options === 'string') {
    process.stderr.write(`demo: ${options}\n\n${HELP}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const out = createOutput(process.stdout);
  const started = performance.now();
  let stack: DemoStack;
  try {
    stack = await startDemoStack({ port: options.port });
  } catch (error) {
    process.stderr.write(`demo: could not start: ${(error as Error).message}\n`);
    return 1;
  }
  try {
    intro(out, stack);
    const ctx: DemoContext = { stack, say: out.say, waitMs: 5000, usedOrders: new Set() };
    const result = await runSteps(STEPS, ctx, out);
    printSummary(out, result, performance.now() - started);
    if (!result.ok) {
      process.stderr.write(`demo: ${result.failure}\n`);
      return 1;
    }
    if (options.serve) await serve(out, stack, ctx.usedOrders);
    return 0;
  } finally {
    await stack.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
