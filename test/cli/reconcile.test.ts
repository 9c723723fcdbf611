import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { main } from '../../src/cli/main.js';
import { formatReport } from '../../src/cli/commands/reconcile.js';
import type { OrderReconciliationReport } from '../../src/core/payments/reconcile-orders.js';
import { createPay, type Pay } from 'paywidget-server';
import { redisStores } from 'paywidget-server/redis';
import { connectedRedis, deletePrefix, useRedisUrl } from '../helpers/redis-server.js';
import { sink } from '../helpers/sink.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ commerce: { orders: 10 } });
});
afterAll(() => sb.close());

const env = () => ({
  PAY_API_URL: sb.paymentUrl, PAY_MERCHANT_ID: sb.merchantId, PAY_MERCHANT_API_KEY: sb.apiKey,
  COMMERCE_URL: sb.commerceUrl, COMMERCE_USERNAME: sb.commerceUsername, COMMERCE_PASSWORD: sb.commercePassword,
});

async function run(argv: string[], environment: Record<string, string | undefined> = env(), signal?: AbortSignal) {
  const stdout = sink();
  const stderr = sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env: environment, signal });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** stdout after its reader went away (`| head`); its 'error' events are ignored, as src/cli/index.ts does. */
const brokenPipe = () => new Writable({ write: (_chunk, _encoding, callback) => callback(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })) }).on('error', () => {});

describe('paywidget payments reconcile', () => {
  it('words the advice for a service that takes only the client token for a shell, naming no createPay option', async () => {
    const strict = await startSandbox({ statusAcceptsMerchantCredentials: false });
    try {
      const paid = strict.payments.create({ amount: 1999, currency: 'EUR', orderId: 'o-strict', status: 'succeeded' });
      const refused = await run(['payments', 'reconcile', paid.id], { PAY_API_URL: strict.paymentUrl, PAY_MERCHANT_ID: strict.merchantId, PAY_MERCHANT_API_KEY: strict.apiKey });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("accepts only the payment's payment_client_token on the status endpoint, which this command does not have");
      expect(refused.stderr).not.toMatch(/statusAuth|\{ clientToken \}/);
    } finally {
      await strict.close();
    }
  });

  it('prints the outcome; exit 0 confirmed, 3 failed, 4 unresolved', async () => {
    const confirmed = sb.payments.create({ amount: 1999, currency: 'EUR', orderId: '000000042', status: 'succeeded' });
    const ok = await run(['payments', 'reconcile', confirmed.id]);
    expect(ok).toMatchObject({ code: 0, stderr: '' });
    expect(ok.stdout).toMatch(new RegExp(`payment\\s+${confirmed.id}\\n`));
    expect(ok.stdout).toMatch(/outcome\s+confirmed/);
    expect(ok.stdout).toMatch(/amount\s+19\.99 EUR/);

    const declined = sb.payments.create({ amount: 500, currency: 'USD', orderId: 'o-2', status: 'declined' });
    const failed = await run(['payments', 'reconcile', declined.id, '--json']);
    expect(failed.code).toBe(3);
    expect(JSON.parse(failed.stdout)).toEqual({ paymentId: declined.id, status: 'declined', outcome: 'failed', source: 'poll', orderId: 'o-2', amount: 500, currency: 'USD' });
    expect(await main(['payments', 'reconcile', declined.id], { stdout: brokenPipe(), stderr: sink().stream, env: env() })).toBe(3); // | head

    const pending = sb.payments.create({ amount: 500, currency: 'USD', orderId: 'o-3', method: 'pay_by_bank' });
    const unresolved = await run(['payments', 'reconcile', pending.id, '--budget', '50']);
    expect(unresolved.code).toBe(4);
    expect(unresolved.stdout).toMatch(/status\s+pending\noutcome\s+needs_reconciliation/);
    expect(unresolved.stderr).toBe(''); // the service answered: nothing to explain
    // A PAY_API_URL pointing nowhere does not read like a payment still pending: stderr says why nothing was learned.
    const nowhere = await run(['payments', 'reconcile', pending.id, '--budget', '0'], { ...env(), PAY_API_URL: 'http://127.0.0.1:1' });
    expect(nowhere.code).toBe(4);
    expect(nowhere.stderr).toMatch(/^paywidget payments reconcile: the payment service could not be read: Could not reach the payment service at http:\/\/127\.0\.0\.1:1.*\[UPSTREAM_UNREACHABLE\]\n$/);

    // Ctrl-C while polling: it stops at once, says what it learned, and exits 130, not 4 ("still unresolved").
    const started = performance.now();
    const interrupted = await run(['payments', 'reconcile', pending.id, '--budget', '60000'], env(), AbortSignal.timeout(300));
    expect(interrupted.code).toBe(130);
    // Not a speed check: it guards that Ctrl-C ends the polling instead of the 60 s budget. 10 s is far
    // above the 300 ms the signal takes and far below the budget.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(interrupted.stdout).toMatch(/outcome\s+needs_reconciliation/);

    for (const r of [ok, failed, unresolved]) {
      for (const secret of [sb.apiKey, confirmed.paymentClientToken, declined.paymentClientToken]) expect(r.stdout + r.stderr).not.toContain(secret);
    }
  });

  it('fails clearly for an unknown payment, missing settings and bad usage', async () => {
    const unknown = await run(['payments', 'reconcile', 'pay_nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/paywidget payments reconcile: The payment service does not know payment pay_nobody.*\[PAYMENT_NOT_FOUND\]/);

    const unconfigured = await run(['payments', 'reconcile', 'pay_x'], {});
    expect(unconfigured.code).toBe(1);
    expect(unconfigured.stderr).toContain('PAY_MERCHANT_API_KEY');

    expect((await run(['payments', 'reconcile'])).code).toBe(2);
    expect((await run(['payments', 'reconcile', 'p', '--budget', '-1'])).stderr).toContain('--budget');
    const help = await run(['payments', 'reconcile', '--help']);
    expect(help.stdout).toMatch(/merchant credentials[\s\S]*Exit codes: 0 confirmed, 3 failed, 4 still unresolved/);
  });

  it('escapes the service\'s words it prints (a status, an order id, a payment id in an error): they must not drive the terminal', async () => {
    const id = 'pay_escaped_1';
    const weird = sb.faults.inject({ route: `GET /api/v1/payments/${id}/status`, status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payment_id: id, status: '\u001b]0;t\u0007weird', order_id: '\u001b[2Jord' }) });
    const shown = await run(['payments', 'reconcile', id, '--budget', '0']);
    sb.faults.remove(weird);
    expect(shown.stdout).toContain('\\u001b]0;t\\u0007weird');
    expect(shown.stdout).toContain('\\u001b[2Jord');
    const other = sb.faults.inject({ route: `GET /api/v1/payments/${id}/status`, status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payment_id: '\u001b[2Jx', status: 'pending' }) });
    const mixed = await run(['payments', 'reconcile', id, '--budget', '0']);
    sb.faults.remove(other);
    expect(mixed.stderr).toContain('\\u001b[2Jx');
    for (const output of [shown.stdout, shown.stderr, mixed.stdout, mixed.stderr]) expect(output.includes('\u001b') || output.includes('\u0007')).toBe(false);
  });

  it('shows what the service answered with its refusal, on one line, terminal controls and the API key left out', async () => {
    const paid = sb.payments.create({ amount: 1999, currency: 'EUR', orderId: 'o-refused', status: 'succeeded' });
    const body = `{"error":"invalid_merchant",\n "message":"merchant \u001b[31mblocked\u001b[0m",\n "echo":"${sb.apiKey}"}`;
    const refusal = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 400, headers: { 'content-type': 'application/json' }, body });
    const refused = await run(['payments', 'reconcile', paid.id]);
    sb.faults.remove(refusal);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^paywidget payments reconcile: .*HTTP 400.* \[UPSTREAM_ERROR\]\n {2}It answered \(application\/json\): \{"error":"invalid_merchant", "message":"merchant \\u001b\[31mblocked\\u001b\[0m", "echo":"\[redacted\]"\}\n$/);
    expect(refused.stderr).not.toContain(sb.apiKey);

    // A long answer (an HTML error page) is cut, and says so.
    const page = sb.faults.inject({ route: 'GET /api/v1/payments/:id/status', status: 403, headers: { 'content-type': 'text/html' }, body: `<html>${'x'.repeat(5000)}</html>` });
    const forbidden = await run(['payments', 'reconcile', paid.id]);
    sb.faults.remove(page);
    expect(forbidden.stderr).toMatch(/\n {2}It answered \(text\/html\): <html>x+… \(5013 bytes\)\n$/);
    expect(forbidden.stderr.length).toBeLessThan(1500);
  });
});

describe('paywidget reconcile', () => {
  it('prints the disagreements as a table, and --json; the in-memory ledger is explained in --help', async () => {
    const from = new Date(Date.now() - 1_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const paid = sb.commerce.addOrder({ state: 'processing', status: 'processing' });
    sb.commerce.addOrder({ state: 'new', status: 'pending' });
    const to = new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z');

    const table = await run(['reconcile', '--from', from, '--to', to]);
    expect(table.code).toBe(3);
    const [header, rule, row] = table.stdout.split('\n');
    expect(header).toMatch(/^FINDING\s+ORDER\s+ENTITY_ID\s+PAYMENT\s+DETAIL$/);
    expect(rule).toMatch(/^-+\s+-+/);
    expect(row).toMatch(new RegExp(`^order_paid_without_payment\\s+${paid.increment_id as string}\\s+${paid.entity_id}\\s+-\\s+order processing/processing$`));
    expect(table.stdout).toContain('2 orders created');
    expect(table.stdout).toContain('0 paid and confirmed, 1 unpaid, 1 disagreement.');

    // `| head`: the reader leaving does not turn "disagreements found" into success.
    expect(await main(['reconcile', '--from', from, '--to', to], { stdout: brokenPipe(), stderr: sink().stream, env: env() })).toBe(3);

    const json = await run(['reconcile', '--from', from, '--to', to, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ orders: 2, paid: 0, unpaid: 1, findings: [{ kind: 'order_paid_without_payment', entityId: paid.entity_id }] });

    const quiet = await run(['reconcile', '--from', '2020-01-01', '--to', '2020-01-31']);
    expect(quiet).toMatchObject({ code: 0, stdout: '0 orders created 2020-01-01 00:00:00 to 2020-01-31 23:59:59 (UTC): 0 paid and confirmed, 0 unpaid, 0 disagreements.\n' });
    // A fraction of a second at --from rounds down, as reconcileOrders cuts its window: up, it would skip what was confirmed within it.
    const within = await run(['reconcile', '--from', '2020-01-01T12:00:00.500Z', '--to', '2020-01-01T12:00:00.600Z']);
    expect(within).toMatchObject({ code: 0, stdout: expect.stringContaining('created 2020-01-01 12:00:00 to 2020-01-01 12:00:00 (UTC)') });

    expect((await run(['reconcile', '--help'])).stdout).toMatch(/REDIS_URL[\s\S]*in memory and empty/);
    // Ctrl-C: the aborted read fails the command, but the exit code says it was interrupted.
    const interrupted = await run(['reconcile', '--from', '2020-01-01', '--to', '2020-01-31'], env(), AbortSignal.abort());
    expect(interrupted.code).toBe(130);
    expect(interrupted.stderr).toBe('paywidget reconcile: interrupted.\n');
    expect((await run(['reconcile', '--from', '2020-01-01'])).stderr).toContain('--from and --to are both required');
    expect((await run(['--help'])).stdout).toMatch(/payments\s+read and reconcile payments[\s\S]*reconcile\s+cross-check/);
  });
});

describe('paywidget reconcile with REDIS_URL', () => {
  it('exits with a clear error, credentials left out, when Redis cannot be reached (a cron job must not hang)', async () => {
    const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
    const result = await new Promise<{ code: number | null; signal: string | null; killed: boolean; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, ['--import', 'tsx', cli, 'reconcile', '--from', '2020-01-01', '--to', '2020-01-02'],
        { env: { ...process.env, ...env(), REDIS_URL: 'redis://shop:hunter2-secret@127.0.0.1:1' }, timeout: 20_000 },
        (error, _stdout, stderr) => {
          const failure = error as { code?: number; signal?: string | null; killed?: boolean } | null;
          resolve({ code: failure ? failure.code ?? null : 0, signal: failure?.signal ?? null, killed: failure?.killed ?? false, stderr });
        });
      child.stdin?.end();
    });
    // Not killed by execFile's time-out (that would be killed: true, signal SIGTERM, code null): it exited by itself.
    expect(result).toMatchObject({ code: 1, signal: null, killed: false });
    expect(result.stderr).toContain('Could not connect to Redis at redis://127.0.0.1:1 (REDIS_URL)');
    // Why, not only "Connection is closed": a refused port, a wrong password (WRONGPASS) and an unknown host differ.
    expect(result.stderr).toContain('ECONNREFUSED');
    expect(result.stderr).toContain('[STORE_UNAVAILABLE]');
    expect(result.stderr).not.toContain('hunter2');
  }, 30_000);

  /**
   * Runs `test` against a Redis of its own prefix: `shared` is the CLI's environment pointing at it, `server`
   * a pay instance keeping its stores there as the merchant's servers would. Cleaned up after.
   */
  async function withSharedRedis(test: (shared: Record<string, string>, server: Pay) => Promise<void>): Promise<void> {
    const redis = await useRedisUrl();
    const prefix = `cli-${Date.now()}-${Math.random().toString(36).slice(2)}:`;
    const client = await connectedRedis(redis.url);
    try {
      const server = createPay({ env: {}, payment: { apiUrl: sb.paymentUrl, merchantId: sb.merchantId, apiKey: sb.apiKey, webhookSecret: sb.webhookSecret }, stores: redisStores(client, { prefix }) });
      await test({ ...env(), REDIS_URL: redis.url, PAYWIDGET_REDIS_PREFIX: prefix }, server);
    } finally {
      await deletePrefix(client, prefix);
      await client.quit();
      await redis.done();
    }
  }

  it('orders commands share the admin token with the servers in Redis: one login for the fleet', () => withSharedRedis(async (shared) => {
    const before = sb.commerce.stats().tokenRequests;
    for (const id of ['1', '2', '3']) expect((await run(['orders', 'get', id], shared)).code).toBe(0);
    expect(sb.commerce.stats().tokenRequests).toBe(before + 1);
  }));

  it('a verdict the shared ledger already holds stands when interrupted: failed exits 3, not 130', () => withSharedRedis(async (shared, server) => {
    const declined = sb.payments.create({ amount: 500, currency: 'USD', orderId: 'o-verdict', status: 'declined' });
    expect((await server.payments.reconcile(declined.id)).outcome).toBe('failed');
    const result = await run(['payments', 'reconcile', declined.id], shared, AbortSignal.abort());
    expect(result.stdout).toMatch(/outcome\s+failed/);
    expect(result.code).toBe(3);
  }));

  it('payments prune removes the settled payments of the shared ledger past --older-than, and keeps unresolved ones', () => withSharedRedis(async (shared, server) => {
    const client = await connectedRedis(shared.REDIS_URL!);
    try {
      const ledger = redisStores(client, { prefix: shared.PAYWIDGET_REDIS_PREFIX }).ledger;
      const longAgo = Date.now() - 40 * 86_400_000;
      await ledger.record({ paymentId: 'pay_old_paid', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: longAgo, orderId: 'o-old' });
      await ledger.record({ paymentId: 'pay_old_declined', status: 'declined', outcome: 'failed', source: 'poll', at: longAgo });
      await ledger.record({ paymentId: 'pay_old_pending', status: 'pending', outcome: 'unresolved', source: 'poll', at: longAgo });
      await ledger.record({ paymentId: 'pay_recent', status: 'succeeded', outcome: 'confirmed', source: 'webhook', at: Date.now() - 86_400_000 });

      expect(await run(['payments', 'prune', '--older-than', '30', '--json'], shared)).toMatchObject({ code: 0, stdout: '{"removed":2,"complete":true}\n', stderr: '' });
      expect(await server.payments.get('pay_old_paid')).toBeUndefined();
      expect(await server.payments.byOrder('o-old')).toEqual([]);
      for (const kept of ['pay_old_pending', 'pay_recent']) expect(await server.payments.get(kept)).toBeDefined();
      expect((await run(['payments', 'prune', '--older-than', '30'], shared)).stdout).toBe('removed 0 settled payments unchanged for 30 days or more\n');
    } finally {
      await client.quit();
    }
  }));

  it('payments prune: usage errors for a missing or too small --older-than, and without REDIS_URL', async () => {
    for (const argv of [['payments', 'prune'], ['payments', 'prune', '--older-than', '0'], ['payments', 'prune', '--older-than', '1.5']]) {
      const result = await run(argv, { ...env(), REDIS_URL: 'redis://127.0.0.1:9' });
      expect([argv.join(' '), result.code]).toEqual([argv.join(' '), 2]);
      expect(result.stderr).toMatch(/--older-than/);
    }
    const noRedis = await run(['payments', 'prune', '--older-than', '30']);
    expect(noRedis.code).toBe(2);
    expect(noRedis.stderr).toContain('REDIS_URL is not set');
    // Blank counts as unset, as everywhere else: not an empty ledger in memory pruned with success.
    const blank = await run(['payments', 'prune', '--older-than', '30'], { ...env(), REDIS_URL: ' ' });
    expect([blank.code, blank.stdout]).toEqual([2, '']);
    expect(blank.stderr).toContain('REDIS_URL is not set');
  });

  it('reads the ledger the servers keep in Redis', () => withSharedRedis(async (shared, server) => {
    // A server recorded a confirmed payment for this order in the shared ledger.
    const from = new Date(Date.now() - 1_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const order = sb.commerce.addOrder({ state: 'processing', status: 'processing' });
    const to = new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const payment = sb.payments.create({ amount: Math.round(Number(order.grand_total) * 100), currency: String(order.order_currency_code), orderId: String(order.increment_id), status: 'succeeded' });
    expect((await server.payments.reconcile(payment.id)).outcome).toBe('confirmed');

    const withLedger = await run(['reconcile', '--from', from, '--to', to, '--json'], shared);
    expect(withLedger.stderr).toBe('');
    const kindsFor = (stdout: string) => (JSON.parse(stdout) as { findings: { entityId?: number; kind: string }[] }).findings.filter((f) => f.entityId === order.entity_id).map((f) => f.kind);
    expect(kindsFor(withLedger.stdout)).toEqual([]);
    expect(JSON.parse(withLedger.stdout).paid).toBe(1);
    // Without the shared ledger the same order looks paid without a payment.
    const alone = await run(['reconcile', '--from', from, '--to', to, '--json']);
    expect(kindsFor(alone.stdout)).toEqual(['order_paid_without_payment']);
  }));
});

describe('formatReport', () => {
  it('escapes the terminal controls an order id or a status from the payment service may hold', () => {
    const hostile = '\u001b]0;owned\u0007\u001b[2J000000042';
    const text = formatReport({
      createdFrom: '2026-11-01 00:00:00', createdTo: '2026-11-01 23:59:59', orders: 1, paid: 0, unpaid: 0,
      findings: [{ kind: 'payment_for_unknown_order', orderId: hostile, paymentId: 'pay_1', paymentStatus: 'succeeded\u001b[2J' }],
      counts: {} as never,
    } as unknown as OrderReconciliationReport);
    expect([...text].filter((char) => char < ' ' && char !== '\n')).toEqual([]);
    expect(text).toContain('000000042');
  });
});
