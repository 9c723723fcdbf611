/** examples/express/server.ts with REDIS_URL: two processes of it share one Redis, so an event runs once. */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';
import { startOnFreePort } from '../../helpers/start-on-free-port.js';
import { useRedisUrl } from '../../helpers/redis-server.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
let url: string;
let done: () => Promise<void>;
let sandbox: Sandbox;
const children: ChildProcess[] = [];

beforeAll(async () => {
  ({ url, done } = await useRedisUrl());
  sandbox = await startSandbox();
});
afterAll(async () => {
  for (const child of children) child.kill();
  await sandbox?.close();
  await done?.();
});

async function startExample(): Promise<{ port: number; output: () => string }> {
  const started = await startOnFreePort(
    (port) => spawn(process.execPath, ['--import', 'tsx', 'examples/express/server.ts'], {
      cwd: root,
      env: { ...process.env, PORT: String(port), REDIS_URL: url, PAY_API_URL: sandbox.paymentUrl, PAY_MERCHANT_ID: sandbox.merchantId, PAY_MERCHANT_API_KEY: sandbox.apiKey, PAY_WEBHOOK_SECRET: sandbox.webhookSecret },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
    'Merchant backend on',
    25_000,
  );
  children.push(started.child);
  return started;
}

describe('examples/express with REDIS_URL', () => {
  it('two processes of the example run one event once', async () => {
    const [a, b] = await Promise.all([startExample(), startExample()]);
    const eventId = `evt_${randomUUID()}`;
    const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_ex', order_id: '1001', amount: 1999, currency: 'EUR' } }, secret: sandbox.webhookSecret, eventId });
    const send = async (port: number) => {
      for (;;) {
        // The first commands may come before the example's Redis connection is ready: 503, retried.
        const response = await fetch(`http://127.0.0.1:${port}/pay/webhooks`, { method: 'POST', headers: signed.headers, body: signed.body as string });
        if (response.status === 200) return response.json();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const answers = await Promise.all([send(a!.port), send(b!.port)]);
    expect(answers).toContainEqual({ received: true });
    expect(answers).toContainEqual({ received: true, duplicate: true });
    const handled = (a!.output() + b!.output()).split(`webhook ${eventId}: payment pay_ex of 1999 EUR (minor units) succeeded: fulfil order 1001.`).length - 1;
    expect(handled).toBe(1);
  }, 60_000);
});
