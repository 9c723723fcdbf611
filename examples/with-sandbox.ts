/**
 * Runs one example against the embedded sandbox, with no account and no network:
 *   npx tsx examples/with-sandbox.ts express|koa|next
 * Starts the fake payment service, points the example at it through the same PAY_* variables a
 * real deployment uses, and has the sandbox send its signed webhooks to the example.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { startSandbox } from 'paywidget-server/sandbox';

const examples: Record<string, { port: number; webhookPath: string }> = {
  express: { port: 3001, webhookPath: '/pay/webhooks' },
  koa: { port: 3002, webhookPath: '/pay/webhooks' },
  next: { port: 3003, webhookPath: '/api/pay/webhooks' },
};
const name = process.argv[2] ?? '';
const example = examples[name];
if (!example) {
  console.error('usage: npx tsx examples/with-sandbox.ts express|koa|next');
  process.exit(2);
}

const port = Number(process.env.PORT ?? example.port);
// The sandbox sends its webhooks to this port, so it is known before the example listens: 0 (any free port) will not do.
if (!Number.isInteger(port) || port < 1 || port > 65_535) {
  console.error(`PORT must be a port number from 1 to 65535 (got ${JSON.stringify(process.env.PORT)}): the sandbox sends its webhooks there.`);
  process.exit(2);
}
const sandbox = await startSandbox({ webhookUrl: `http://127.0.0.1:${port}${example.webhookPath}` });
Object.assign(process.env, {
  PORT: String(port),
  PAY_API_URL: sandbox.paymentUrl,
  PAY_MERCHANT_ID: sandbox.merchantId,
  PAY_MERCHANT_API_KEY: sandbox.apiKey,
  PAY_WEBHOOK_SECRET: sandbox.webhookSecret,
  // For checkout pages: the widget comes from its own host, checked against its published sha384.
  PAY_WIDGET_HOST: sandbox.widgetUrl,
  PAY_WIDGET_INTEGRITY: sandbox.widgetIntegrity,
});
console.log(`Sandbox payment service on ${sandbox.paymentUrl}; test card ${sandbox.testCards.succeeds} succeeds.`);
console.log(`Sandbox widget host on ${sandbox.widgetUrl} (integrity ${sandbox.widgetIntegrity}).`);
// The sandbox's own test secret, so you can sign webhooks by hand (signWebhook from paywidget-server/testing).
console.log(`Sandbox signing secret: PAY_WEBHOOK_SECRET=${sandbox.webhookSecret}`);

if (name === 'next') {
  // Next imports the built package: run `npm run build` first. Its own binary, not npx, so a signal reaches it.
  const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');
  const next = spawn(process.execPath, [nextBin, 'dev', 'examples/next', '-p', String(port), '-H', '127.0.0.1'], { stdio: 'inherit' });
  // Stopped by a process manager (SIGTERM to this process alone), next dev would go on holding the port.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => next.kill(signal));
  next.on('exit', (code, signal) => void sandbox.close().then(() => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0))));
} else {
  await import(`./${name}/server.ts`);
}
