import { createPay } from '../../core/pay.js';
import type { OrderFinding, OrderReconciliationReport } from '../../core/payments/reconcile-orders.js';
import { checkWindow, parseCliDate } from '../dates.js';
import { escapeControls, EXIT, parse, UsageError, writeVerdict, type Command, printHelp, warnOn } from '../io.js';
import { formatTable } from '../table.js';
import { silentLogger } from '../../core/logger.js';
import { sharedStores } from '../shared-stores.js';
import { money, RECONCILE_EXIT } from './payments.js';

function detail(finding: OrderFinding): string {
  switch (finding.kind) {
    case 'amount_mismatch':
    case 'amount_unverified':
      return `paid ${money(finding.actual?.amount, finding.actual?.currency)}, order ${money(finding.expected?.amount, finding.expected?.currency)}`;
    case 'multiple_confirmed_payments':
      return `${finding.paymentIds?.length ?? 0} confirmed: ${finding.paymentIds?.join(', ') ?? ''}`;
    case 'payment_for_unknown_order':
      return `payment ${finding.paymentStatus ?? ''}${finding.actual?.amount === undefined ? '' : `, ${money(finding.actual.amount, finding.actual.currency)}`}`;
    default:
      return `order ${finding.orderState ?? '?'}/${finding.orderStatus ?? '?'}${finding.paymentStatus ? `, payment ${finding.paymentStatus}` : ''}`;
  }
}

export function formatReport(report: OrderReconciliationReport): string {
  const summary = `${report.orders} orders created ${report.createdFrom} to ${report.createdTo} (UTC): ${report.paid} paid and confirmed, ${report.unpaid} unpaid, ${report.findings.length} disagreement${report.findings.length === 1 ? '' : 's'}.`;
  if (report.findings.length === 0) return summary;
  // Ids and statuses come from the payment service's answers and webhooks, which anyone paying partly writes: escaped,
  // they cannot drive the terminal (a title, a cleared screen).
  const rows = report.findings.map((f) => [f.kind, f.orderId ?? '-', f.entityId === undefined ? '-' : String(f.entityId), f.paymentId ?? '-', detail(f)].map(escapeControls));
  return `${formatTable(['FINDING', 'ORDER', 'ENTITY_ID', 'PAYMENT', 'DETAIL'], rows)}\n\n${summary}`;
}

export const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'cross-check the orders of a window against confirmed payments',
  help: `Usage: paywidget reconcile --from T --to T [--json] [--lookbehind-hours N]

Walks the commerce platform's orders created from T to T and compares each with the payment ledger:
  payment_confirmed_order_unpaid  the service confirmed a payment, the order is not marked paid
  order_paid_without_payment      the order is marked paid, no confirmed payment is recorded
  amount_mismatch                 a confirmed payment's amount or currency differs from the order's total
  amount_unverified               a confirmed payment's amount or currency was never reported: not checked
  multiple_confirmed_payments     more than one confirmed payment for one order
  payment_for_unknown_order       a confirmed payment (confirmed or first seen in the window) naming no
                                  order, or one the platform does not have
Orders paid and confirmed are counted, not listed.

The ledger is what this library recorded from status polls and webhooks. Set REDIS_URL to the Redis your
servers keep it in (redisStores; PAYWIDGET_REDIS_PREFIX if they use another prefix than paywidget:).
Without it the ledger is in memory and empty, so every paid order shows as order_paid_without_payment.

Options:
  --from T                 created at or after T   T: 'YYYY-MM-DD HH:MM:SS' (UTC), 'YYYY-MM-DD', or ISO 8601 with a zone
  --to T                   created at or before T  (a bare date means the end of that day)
  --lookbehind-hours N     read orders created up to N hours before --from in pages too (default 24): a
                           payment confirmed in the window for an older order costs a request of its own
  --json                   print the report as JSON
  -h, --help               this help

Exit codes: 0 no disagreement, 3 disagreements found, 1 failed, 2 bad usage, 130 stopped by Ctrl-C.

Environment: COMMERCE_URL, COMMERCE_USERNAME, COMMERCE_PASSWORD (see 'paywidget orders --help'), REDIS_URL.`,
  async run(args, io, path) {
    const { values } = parse(path, args, { from: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' }, 'lookbehind-hours': { type: 'string' } });
    if (values.help) return printHelp(io, this);
    if (values.from === undefined || values.to === undefined) throw new UsageError('--from and --to are both required.', path);
    // Down, as reconcileOrders cuts its window: moved up to the next second, it would miss a payment confirmed within this one.
    const createdFrom = parseCliDate(values.from, 'from', path, 'to');
    const createdTo = parseCliDate(values.to, 'to', path);
    checkWindow(createdFrom, createdTo, path);
    const hours = values['lookbehind-hours'] === undefined ? undefined : Number(values['lookbehind-hours']);
    // Past 2^53 ms the option is not a whole number of milliseconds any more (and goes back before 1970 anyway).
    if (hours !== undefined && (!/^[0-9]+(\.[0-9]+)?$/.test(values['lookbehind-hours']!) || !Number.isSafeInteger(Math.round(hours * 3_600_000)))) {
      throw new UsageError('--lookbehind-hours must be a number of hours, 0 or more (and less than a million years).', path);
    }
    const shared = await sharedStores(io.env, warnOn(io));
    let report: OrderReconciliationReport;
    try {
      const pay = createPay({ env: io.env, logger: silentLogger, stores: shared.stores });
      report = await pay.reconcileOrders({ createdFrom, createdTo, signal: io.signal, ...(hours === undefined ? {} : { lookbehindMs: Math.round(hours * 3_600_000) }) });
    } finally {
      await shared.close();
    }
    await writeVerdict(io.stdout, values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
    return report.findings.length === 0 ? EXIT.ok : RECONCILE_EXIT.findings;
  },
};
