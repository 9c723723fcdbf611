/** `paywidget sandbox`: starts the sandbox where asked, prints addresses and credentials that work, stops on Ctrl-C. */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { eventually } from '../helpers/eventually.js';
import { sink } from '../helpers/sink.js';
import { startOnFreePort } from '../helpers/start-on-free-port.js';

const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));

async function run(argv: string[]) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env: {} });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('paywidget sandbox', () => {
  it('explains itself: port 3000, the simulator and emulator addresses', async () => {
    const { code, stdout } = await run(['sandbox', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: paywidget sandbox');
    expect(stdout).toContain('--port N            port of the payment service (default 3000');
    expect(stdout).toContain('Android emulator as http://10.0.2.2:3000');
    expect((await run(['--help'])).stdout).toMatch(/sandbox {3,}run the sandbox/);
  });

  it.each([
    [['sandbox', '--port', 'x'], /--port must be a port number/],
    [['sandbox', '--port', '70000'], /--port must be a port number/],
    [['sandbox', '--webhook-url', 'https://example.com/hook'], /--webhook-url must be an http: URL/],
    [['sandbox', '--orders=-1'], /--orders must be a whole number/],
    [['sandbox', '--orders', 'many'], /--orders must be a whole number/],
    [['sandbox', 'extra'], /Unexpected argument 'extra'/],
    // Two of its own servers on one port: a clash of options, not a port someone else holds.
    [['sandbox', '--port', '45671', '--widget-port', '45671'], /--port and --widget-port are both 45671: the sandbox's servers need a port each/],
    [['sandbox', '--widget-port', '45672', '--commerce-port', '45672'], /--widget-port and --commerce-port are both 45672/],
  ])('%j is bad usage (exit 2)', async (argv, message) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it('says so when its port is taken (exit 1)', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as { port: number };
    try {
      const { code, stderr } = await run(['sandbox', '--port', String(port)]);
      expect(code).toBe(1);
      expect(stderr).toContain(`paywidget sandbox: port ${port} on 127.0.0.1 is already in use; stop what listens there or choose another with --port N.`);
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('runs as a process: the printed addresses and credentials answer, webhooks go where asked, Ctrl-C stops it', async () => {
    const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/pay/webhooks`;

    const { child, port, output } = await startOnFreePort(
      (port) => spawn(process.execPath, ['--import', 'tsx', cli, 'sandbox', '--port', String(port), '--webhook-url', webhookUrl, '--orders', '7'], { stdio: ['ignore', 'pipe', 'pipe'] }),
      'Endpoints and test controls',
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const stdout = output();
      const env = Object.fromEntries([...stdout.matchAll(/^ {2}([A-Z_]+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      expect(env.PAY_API_URL).toBe(`http://127.0.0.1:${port}`);
      expect(stdout).toContain(`http://10.0.2.2:${port}`);
      expect(stdout).toContain(`signed and POSTed to ${webhookUrl}`);
      expect(stdout).toContain('Magento 2 REST, 7 generated orders');

      // The merchant credentials mint.
      const minted = await fetch(`${env.PAY_API_URL}/api/v1/checkout/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-merchant-id': env.PAY_MERCHANT_ID!, 'x-merchant-api-key': env.PAY_MERCHANT_API_KEY! },
        body: JSON.stringify({ amount: 1999, currency: 'EUR', order_id: 'sandbox-cli-1' }),
      });
      expect(minted.status).toBe(201);
      // The widget host publishes the integrity printed.
      const published = (await (await fetch(`${env.PAY_WIDGET_HOST}/widget/v1/integrity.json`)).json()) as { integrity: string };
      expect(published.integrity).toBe(env.PAY_WIDGET_INTEGRITY);
      // The commerce login works and reads an order.
      const login = await fetch(`${env.COMMERCE_URL}/rest/V1/integration/admin/token`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: env.COMMERCE_USERNAME, password: env.COMMERCE_PASSWORD }),
      });
      expect(login.status).toBe(200);
      const order = await fetch(`${env.COMMERCE_URL}/rest/V1/orders/7`, { headers: { authorization: `Bearer ${(await login.json()) as string}` } });
      expect(order.status).toBe(200);
      // A payment that succeeds sends its webhook, signed with the printed secret, to --webhook-url.
      await fetch(`${env.PAY_API_URL}/sandbox/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: 500, currency: 'EUR', order_id: 'sandbox-cli-2', status: 'succeeded' }) });
      await eventually(() => received.length > 0, 15_000, 'the webhook');
      const { createHmac } = await import('node:crypto');
      const { headers, body } = received[0]!;
      expect(headers['x-pay-signature']).toBe(createHmac('sha256', env.PAY_WEBHOOK_SECRET!).update(`${String(headers['x-pay-timestamp'])}.${body}`).digest('hex'));

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(output()).toContain('Sandbox stopped.');
      await expect(fetch(`${env.PAY_API_URL}/api/v1/checkout/init`, { method: 'POST' })).rejects.toThrow();
    } finally {
      child.kill();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
