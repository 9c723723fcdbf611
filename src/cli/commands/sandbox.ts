import { startSandbox } from '../../sandbox/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import { EXIT, parse, UsageError, wholeNumber, write, type CliIo, type Command, printHelp } from '../io.js';
import { formatPairs } from '../table.js';

/** The port the document's mobile development runs point `baseUrl` at. */
export const DEFAULT_SANDBOX_PORT = 3000;

function portOption(path: string, name: string, value: string | undefined, fallback: number): number {
  return wholeNumber(path, name, value, 'a port number from 0 to 65535', 0, 65_535) ?? fallback;
}

const spaced = (card: string) => card.replace(/(\d{4})(?=\d)/g, '$1 ');

function describe(sb: Sandbox, webhookUrl: string | undefined): string {
  const port = new URL(sb.paymentUrl).port;
  const android = `http://10.0.2.2:${port}`;
  return `PayWidget sandbox: a fake payment service, widget host and commerce platform on this machine.
It listens on 127.0.0.1 only. Ctrl-C stops it. The API key, webhook secret and admin password below are new at every start.

Payment service (the mobile SDK's baseUrl, your backend's PAY_API_URL)
${formatPairs([
    ['  this machine', sb.paymentUrl],
    ['  iOS simulator', `${sb.paymentUrl.padEnd(android.length)}  (it shares this machine's loopback)`],
    ['  Android emulator', `${android}  (its alias for this machine's loopback: 127.0.0.1 is enough)`],
    ['  Android phone', `adb reverse tcp:${port} tcp:${port}, then ${sb.paymentUrl} (over Wi-Fi it cannot reach 127.0.0.1)`],
  ])}
  Cleartext HTTP needs a debug-only exception: NSAllowsLocalNetworking on iOS, a network_security_config
  for 10.0.2.2 on Android. Never in a release build.

${formatPairs([
    ['Widget host', `${sb.widgetUrl}  (/widget/v1/paywidget.js for web checkout pages)`],
    ['Commerce platform', `${sb.commerceUrl}  (Magento 2 REST, ${sb.commerce.orderCount} generated orders)`],
    ['Webhooks', webhookUrl ? `signed and POSTed to ${webhookUrl}` : 'not sent; start with --webhook-url http://127.0.0.1:3001/pay/webhooks'],
  ])}

For your backend's environment (sandbox test credentials; server-side only, never in an app or page):
  PAY_API_URL=${sb.paymentUrl}
  PAY_MERCHANT_ID=${sb.merchantId}
  PAY_MERCHANT_API_KEY=${sb.apiKey}
  PAY_WEBHOOK_SECRET=${sb.webhookSecret}
  PAY_WIDGET_HOST=${sb.widgetUrl}
  PAY_WIDGET_INTEGRITY=${sb.widgetIntegrity}
  COMMERCE_URL=${sb.commerceUrl}
  COMMERCE_USERNAME=${sb.commerceUsername}
  COMMERCE_PASSWORD=${sb.commercePassword}

Test cards (any future expiry date, any 3-digit CVC):
  ${spaced(sb.testCards.succeeds)}  succeeds
  ${spaced(sb.testCards.requires3ds)}  asks for 3DS (pass or fail it on the challenge page)
  ${spaced(sb.testCards.declines)}  is declined
Saved cards: customerEmail ${sb.testShopper.email}. Pay by bank: give a returnUrl, then approve or decline on the bank page.
Endpoints and test controls: src/sandbox/README.md in the package (node_modules/paywidget-server).
`;
}

function untilAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) return; // no way to be stopped but the process ending
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export const sandboxCommand: Command = {
  name: 'sandbox',
  summary: 'run the sandbox: fake payment service, widget host and commerce platform',
  help: `Usage: paywidget sandbox [--port N] [--webhook-url URL] [--widget-port N] [--commerce-port N] [--orders N]

Starts the embedded sandbox and keeps it running until Ctrl-C: the payment service (test cards, 3DS,
pay by bank, signed webhooks), the widget host and a commerce platform with generated orders. Prints
their addresses and the test credentials to give your backend.

The payment service listens on port 3000 by default, where the mobile development runs point baseUrl:
an iOS simulator reaches it as http://127.0.0.1:3000 (the loopback it shares with this machine), an
Android emulator as http://10.0.2.2:3000 (its alias for this machine's loopback). Everything binds
127.0.0.1 only, so nothing else on the network can reach it.

Options:
  --port N            port of the payment service (default ${DEFAULT_SANDBOX_PORT}; 0 picks a free one)
  --webhook-url URL   where to POST signed webhooks, e.g. http://127.0.0.1:3001/pay/webhooks (http: only)
  --widget-port N     port of the widget host (default: a free one)
  --commerce-port N   port of the commerce platform (default: a free one)
  --orders N          orders the commerce platform generates (default 50)
  -h, --help          this help

Exit codes: 0 stopped with Ctrl-C, 1 could not start (a port in use), 2 bad usage.`,
  async run(args: string[], io: CliIo, path: string) {
    const { values } = parse(path, args, {
      port: { type: 'string' },
      'webhook-url': { type: 'string' },
      'widget-port': { type: 'string' },
      'commerce-port': { type: 'string' },
      orders: { type: 'string' },
    });
    if (values.help) return printHelp(io, this);
    const port = portOption(path, 'port', values.port, DEFAULT_SANDBOX_PORT);
    const widgetPort = portOption(path, 'widget-port', values['widget-port'], 0);
    const commercePort = portOption(path, 'commerce-port', values['commerce-port'], 0);
    // Its three servers cannot share a port: said as such, not as a port some other program holds.
    const chosen = [['--port', port], ['--widget-port', widgetPort], ['--commerce-port', commercePort]] as const;
    for (const [i, [option, value]] of chosen.entries()) {
      const clash = chosen.slice(i + 1).find(([, other]) => value !== 0 && other === value);
      if (clash) throw new UsageError(`${option} and ${clash[0]} are both ${value}: the sandbox's servers need a port each (0 picks a free one).`, path);
    }
    const orders = wholeNumber(path, 'orders', values.orders, 'a whole number up to 1000000', 0, 1_000_000) ?? 50;
    const webhookUrl = values['webhook-url'];
    if (webhookUrl !== undefined && !(URL.canParse(webhookUrl) && new URL(webhookUrl).protocol === 'http:')) {
      throw new UsageError(`--webhook-url must be an http: URL such as http://127.0.0.1:3001/pay/webhooks (got '${webhookUrl}').`, path);
    }

    let sb: Sandbox;
    try {
      sb = await startSandbox({ port, widgetPort, webhookUrl, commerce: { port: commercePort, orders } });
    } catch (error) {
      const failure = error as NodeJS.ErrnoException & { port?: number };
      if (failure.code !== 'EADDRINUSE' && failure.code !== 'EACCES') throw error;
      const option = failure.port === port ? '--port' : failure.port === widgetPort ? '--widget-port' : '--commerce-port';
      const why = failure.code === 'EADDRINUSE' ? 'is already in use' : 'needs privileges this process does not have';
      await write(io.stderr, `${path}: port ${failure.port ?? '?'} on 127.0.0.1 ${why}; stop what listens there or choose another with ${option} N.\n`);
      return EXIT.failed;
    }
    try {
      await write(io.stdout, describe(sb, webhookUrl));
      await untilAborted(io.signal);
    } finally {
      await sb.close();
    }
    await write(io.stdout, 'Sandbox stopped.\n');
    return EXIT.ok;
  },
};
