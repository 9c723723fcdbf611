import { fromMinorUnits } from '../../core/money/index.js';
import { createPay } from '../../core/pay.js';
import { isPaymentId } from '../../core/payments/status.js';
import type { ReconcileResult } from '../../core/payments/reconcile.js';
import type { PruneLedgerReport } from '../../core/payments/prune-ledger.js';
import { forTheShell } from '../for-the-shell.js';
import { sharedStores } from '../shared-stores.js';
import { silentLogger } from '../../core/logger.js';
import { commandGroup, escapeControls, EXIT, parse, UsageError, wholeNumber, write, writeVerdict, type Command, printHelp, warnOn } from '../io.js';
import { formatPairs } from '../table.js';

export const PAYMENT_ENVIRONMENT = `Environment:
  PAY_API_URL           the payment service's base URL
  PAY_MERCHANT_ID       sent as X-Merchant-Id
  PAY_MERCHANT_API_KEY  sent as X-Merchant-Api-Key (never printed)`;

/** Exit codes of the reconciliation commands, beside EXIT: the command ran, and the answer needs attention. */
export const RECONCILE_EXIT = { paymentFailed: 3, unresolved: 4, findings: 3 } as const;

/** `19.99 EUR`, or the minor units as they are when the currency is unknown. */
export function money(amount: number | undefined, currency: string | undefined): string {
  if (amount === undefined) return currency ?? '';
  if (currency === undefined) return `${amount} (minor units)`;
  try {
    return `${fromMinorUnits(amount, currency)} ${currency}`;
  } catch {
    return `${amount} ${currency} (minor units)`;
  }
}

function describeResult(result: ReconcileResult): string {
  // The service's words (its status, the order id it sent) are escaped: they must not drive the terminal.
  return formatPairs([
    ['payment', escapeControls(result.paymentId)],
    ['status', result.status === null ? '(unknown: the service could not be read)' : escapeControls(result.status)],
    ['outcome', result.outcome],
    ['source', result.source ?? '-'],
    ...(result.orderId === undefined ? [] : [['order', escapeControls(result.orderId)] as const]),
    ...(result.amount === undefined && result.currency === undefined ? [] : [['amount', escapeControls(money(result.amount, result.currency))] as const]),
  ]);
}

const reconcile: Command = {
  name: 'reconcile',
  summary: 'poll one payment to a terminal status',
  help: `Usage: paywidget payments reconcile <payment_id> [--budget MS] [--json]

Polls GET /api/v1/payments/{payment_id}/status with the merchant credentials, with back-off, until
the payment is confirmed or failed or the budget runs out, and prints what it learned.

Options:
  --budget MS   how long to poll (default 10000); 0 polls once
  --json        print the result as JSON
  -h, --help    this help

Exit codes: 0 confirmed, 3 failed, 4 still unresolved (needs_reconciliation: poll again later or wait
for the webhook; do not charge again; also when the service could not be reached within the budget,
shown as status unknown), 1 the status can never be read as asked (unknown payment, refused
credentials, a redirect to another address), 2 bad usage, 130 interrupted before a verdict.

With REDIS_URL set to the Redis your servers keep their ledger in (redisStores, through ioredis, which
must be installed; PAYWIDGET_REDIS_PREFIX if not paywidget:), a verdict already recorded there is the
answer, and what the polls learn is recorded.

${PAYMENT_ENVIRONMENT}`,
  async run(args, io, path) {
    const { values, positionals } = parse(path, args, { budget: { type: 'string' }, json: { type: 'boolean' } }, true);
    if (values.help) return printHelp(io, this);
    if (positionals.length !== 1) throw new UsageError('expected one payment_id.', path);
    if (!isPaymentId(positionals[0]!)) throw new UsageError(`'${positionals[0]!.slice(0, 40)}' is not a payment_id: 1 to 200 characters without spaces or slashes.`, path);
    const budgetMs = wholeNumber(path, 'budget', values.budget, 'a whole number of milliseconds, 0 or more');
    // With REDIS_URL, what it learns goes into the ledger the servers keep (and a verdict there is the answer).
    const shared = await sharedStores(io.env, warnOn(io));
    let result: ReconcileResult;
    try {
      const pay = createPay({ env: io.env, logger: silentLogger, payments: { statusAuth: 'merchant' }, stores: shared.stores });
      result = await pay.payments.reconcile(positionals[0]!, { budgetMs, signal: io.signal });
    } finally {
      await shared.close();
    }
    await writeVerdict(io.stdout, values.json ? `${JSON.stringify(result, null, 2)}\n` : `${describeResult(result)}\n`);
    // Why nothing was learned (PAY_API_URL pointing nowhere, say): else it reads like a payment still pending.
    if (result.lastError) await write(io.stderr, `${path}: the payment service could not be read: ${escapeControls(forTheShell(result.lastError.message))} [${result.lastError.code}]\n`);
    // A verdict reached stands, even if Ctrl-C came while it was read.
    if (result.outcome === 'confirmed') return EXIT.ok;
    if (result.outcome === 'failed') return RECONCILE_EXIT.paymentFailed;
    // Ctrl-C ends the polling early, as a spent budget would: what happened is the interruption, not a verdict.
    return io.signal?.aborted ? EXIT.interrupted : RECONCILE_EXIT.unresolved;
  },
};

const DAY_MS = 86_400_000;

const prune: Command = {
  name: 'prune',
  summary: 'remove settled payments from the ledger in Redis (retention)',
  help: `Usage: paywidget payments prune --older-than DAYS [--json]

Removes from the ledger your servers keep in Redis the confirmed and failed payments that have not
changed for DAYS days. Unresolved payments stay, whatever their age: the sweep still works through
them. Run it from a daily job, with DAYS at least as long as the windows you reconcile
('paywidget reconcile --from'): a payment removed is no longer there to be checked against its order.

Options:
  --older-than DAYS  whole days, 1 or more: a recent confirmation keeps its order from being paid twice
  --json             print { removed, complete } as JSON
  -h, --help         this help

Exit codes: 0 done, 1 Redis could not be reached (STORE_UNAVAILABLE), 2 bad usage (REDIS_URL unset
included), 130 interrupted (what was removed stays removed; run it again to go on).

Environment:
  REDIS_URL               the Redis your servers keep their ledger in (redisStores)
  PAYWIDGET_REDIS_PREFIX  their key prefix, if not paywidget:`,
  async run(args, io, path) {
    const { values, positionals } = parse(path, args, { 'older-than': { type: 'string' }, json: { type: 'boolean' } }, true);
    if (values.help) return printHelp(io, this);
    if (positionals.length > 0) throw new UsageError(`unexpected '${positionals[0]!.slice(0, 40)}'.`, path);
    const days = wholeNumber(path, 'older-than', values['older-than'], 'a whole number of days, 1 or more', 1, 36_500);
    if (days === undefined) throw new UsageError('--older-than DAYS is required.', path);
    if (!io.env.REDIS_URL?.trim()) throw new UsageError('REDIS_URL is not set: the ledger to prune is the one your servers keep in Redis (a CLI run alone has none).', path);
    const shared = await sharedStores(io.env, warnOn(io));
    let report: PruneLedgerReport;
    try {
      const pay = createPay({ env: {}, logger: silentLogger, stores: shared.stores });
      report = await pay.payments.pruneLedger({ olderThanMs: days * DAY_MS, signal: io.signal });
    } finally {
      await shared.close();
    }
    const plural = report.removed === 1 ? '' : 's';
    const said = `removed ${report.removed} settled payment${plural} unchanged for ${days} day${days === 1 ? '' : 's'} or more${report.complete ? '' : '; interrupted, run it again to go on'}\n`;
    await writeVerdict(io.stdout, values.json ? `${JSON.stringify(report)}\n` : said);
    return report.complete ? EXIT.ok : EXIT.interrupted;
  },
};

export const paymentsCommand = commandGroup('payments', 'read and reconcile payments with the payment service', [
  { usage: 'reconcile <payment_id>', command: reconcile },
  { usage: 'prune --older-than DAYS', command: prune },
]);
