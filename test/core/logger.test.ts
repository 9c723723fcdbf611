import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createPay, type Logger } from 'paywidget-server';
import { startSandbox } from 'paywidget-server/sandbox';
import { signWebhook } from 'paywidget-server/testing';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A process that creates a pay instance as the caller says and sends it a webhook whose body a JSON parser already ate. */
async function stderrOf(options: string): Promise<{ stdout: string; stderr: string }> {
  const script = `
    import { createPay, silentLogger } from './src/index.ts';
    const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'sk_never_printed', webhookSecret: 'whsec_never_printed' }${options} });
    const response = await pay.handle({ method: 'POST', path: '/webhooks', headers: {}, parsedBody: { type: 'payment.succeeded' } });
    console.log(response.status);`;
  return promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
}

describe('the default logger', () => {
  it('puts a refused webhook on stderr, so it is seen without configuring a logger, and no secret with it', async () => {
    const { stdout, stderr } = await stderrOf('');
    expect(stdout.trim()).toBe('500');
    expect(stderr).toMatch(/paywidget-server: webhook refused/);
    expect(stderr).toContain('WEBHOOK_BODY_NOT_RAW');
    expect(stderr).not.toMatch(/never_printed/);
  });

  it('puts errors on stderr too, never on stdout, where a CLI or a pipe has its own output', async () => {
    const script = `
      import { consoleLogger } from './src/core/logger.ts';
      consoleLogger.error({ eventId: 'evt_1' }, 'webhook handler failed');
      consoleLogger.warn({ key: 'k' }, 'claim lost');
      consoleLogger.info({}, 'said nowhere');`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
    expect(stdout).toBe('');
    expect(stderr).toMatch(/paywidget-server: webhook handler failed[^]*evt_1[^]*paywidget-server: claim lost/);
    expect(stderr).not.toContain('said nowhere');
  });

  it('is muted by silentLogger', async () => {
    const { stdout, stderr } = await stderrOf(', logger: silentLogger');
    expect(stdout.trim()).toBe('500');
    expect(stderr).toBe('');
  });
});

describe('an async logger whose writes reject (a broken transport)', () => {
  it('fails no request and does not end the process with an unhandled rejection', async () => {
    // In a process of its own: an unhandled rejection ends a Node process, which the exit code and stdout show.
    const script = `
      import { createPay } from './src/index.ts';
      import { startSandbox } from './src/sandbox/index.ts';
      const sandbox = await startSandbox();
      const rejecting = async () => { throw new Error('log transport down'); };
      const pay = createPay({ env: {}, logger: { debug: rejecting, info: rejecting, warn: rejecting, error: rejecting },
        payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
        resolveCheckout: () => ({ amount: 1999, currency: 'EUR', orderId: 'o_async_log' }) });
      const minted = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{}' });
      const refused = await pay.handle({ method: 'POST', path: '/webhooks', headers: {}, rawBody: '{}' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      console.log(minted.status, refused.status);
      await sandbox.close();`;
    const result = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root }).then((r) => ({ code: 0, ...r }), (error: { code: number; stdout: string; stderr: string }) => error);
    expect(result.stderr).not.toContain('log transport down');
    expect([result.code, result.stdout.trim()]).toEqual([0, '200 400']);
  });
});

describe('a logger that throws (a broken transport)', () => {
  it('fails no request: the token is minted, the webhook is processed once and its duplicate answered, a forgery refused', async () => {
    const sandbox = await startSandbox();
    try {
      let calls = 0;
      const broken = () => {
        calls++;
        throw new Error('log transport closed');
      };
      const logger: Logger = { debug: broken, info: broken, warn: broken, error: broken };
      const pay = createPay({
        env: {}, logger,
        payment: { apiUrl: sandbox.paymentUrl, merchantId: sandbox.merchantId, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
        resolveCheckout: () => ({ amount: 1999, currency: 'EUR', orderId: 'o_log' }),
      });
      let runs = 0;
      pay.webhooks.onAny(() => void runs++);

      const minted = await pay.handle({ method: 'POST', path: '/widget-token', headers: { 'content-type': 'application/json' }, rawBody: '{}' });
      expect(minted?.status).toBe(200);
      const signed = signWebhook({ payload: { type: 'payment.succeeded', data: { payment_id: 'pay_log', status: 'succeeded' } }, secret: sandbox.webhookSecret });
      const send = (body: string) => pay.handle({ method: 'POST', path: '/webhooks', headers: signed.headers, rawBody: body });
      expect((await send(signed.body as string))?.status).toBe(200);
      expect((await send(signed.body as string))?.body).toBe('{"received":true,"duplicate":true}');
      expect((await send(String(signed.body).replace('pay_log', 'pay_lug')))?.status).toBe(400);
      expect(runs).toBe(1);
      expect((await pay.payments.get('pay_log'))?.status).toBe('succeeded');
      expect(calls).toBeGreaterThan(3); // the library did log: each call threw
    } finally {
      await sandbox.close();
    }
  });
});
