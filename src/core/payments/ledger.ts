import { isPending, type Awaitable } from '../awaitable.js';
import { invalidInput, loggedWhereItArose, PayError } from '../errors.js';
import { describeKind } from '../option-types.js';
import type { ForgetCondition, LedgerEntry, LedgerObservation, LedgerQuery, LedgerRecordResult, LedgerStore } from '../stores/ledger-store.js';
import type { Logger } from '../types.js';
import { isWellFormedText } from '../well-formed.js';
import type { PaymentOutcome } from './options.js';
import type { PaymentStatus } from './status.js';

/** Something learned about a payment: an observation before the ledger classifies its status and stamps it. */
export type LedgerInput = Omit<LedgerObservation, 'outcome' | 'at'>;

export interface Ledger {
  get(paymentId: string): Promise<LedgerEntry | undefined>;
  /** Answers at once when the store does (the memory store), so a webhook's record costs no wait. */
  record(input: LedgerInput): Awaitable<LedgerRecordResult>;
  list(query: LedgerQuery): AsyncIterable<LedgerEntry>;
  byOrder(orderId: string): Promise<LedgerEntry[]>;
  forget(paymentId: string, condition: ForgetCondition): Promise<boolean>;
}

/**
 * The entries of one order, whichever id it was minted under: the increment_id (minting from an
 * order) or the entity_id. Each payment once.
 */
export async function entriesOfOrder(ledger: Pick<Ledger, 'byOrder'>, order: { increment_id: string; entity_id: number }): Promise<LedgerEntry[]> {
  const byId = new Map<string, LedgerEntry>();
  for (const key of new Set([order.increment_id, String(order.entity_id)])) {
    for (const entry of await ledger.byOrder(key)) byId.set(entry.paymentId, entry);
  }
  return [...byId.values()];
}

/** Records what a status poll learned: the ledger classifies the status itself, and keeps no decline code. */
export function recordPoll(ledger: Pick<Ledger, 'record'>, { paymentId, status, orderId, amount, currency }: PaymentStatus): Awaitable<LedgerRecordResult> {
  return ledger.record({ paymentId, status, source: 'poll', orderId, amount, currency });
}

/**
 * The order id byOrder looks under: text, as payments are filed (a numeric order_id a service sent is kept as
 * its digits, so a whole number from JavaScript finds the same entries). Anything else is refused: answering
 * "no payment" for it would let the caller's own guard mint again.
 */
function orderIdText(orderId: unknown): string {
  if (typeof orderId === 'string') return orderId;
  if (typeof orderId === 'number' && Number.isSafeInteger(orderId) && orderId >= 0) return String(orderId);
  throw invalidInput('orderId', `byOrder takes the order id the payment was minted for, as text (such as '000000042'), got ${describeKind(orderId)}.`);
}

export interface LedgerDeps {
  store: LedgerStore;
  classify: (status: string | null) => PaymentOutcome;
  now: () => number;
  logger: Logger;
}

function unavailable(cause: unknown): PayError {
  return new PayError('STORE_UNAVAILABLE', 'The payment ledger store failed, so the payment outcome could not be recorded or read. Check the store (e.g. Redis): its connection, or the error logged with this one, which names a key edited by hand.', { cause });
}

/** The ledger over its store: statuses classified by the configured terminal sets, store failures as STORE_UNAVAILABLE (503). */
export function createLedger(deps: LedgerDeps): Ledger {
  const { store, logger } = deps;
  const failed = (what: string, paymentId: string | undefined, error: unknown) => {
    logger.error({ err: error, paymentId }, `payment ledger store failed to ${what}`);
    return loggedWhereItArose(unavailable(error));
  };
  const guard = async <T>(what: string, paymentId: string | undefined, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw failed(what, paymentId, error);
    }
  };
  return {
    get: (paymentId) => guard('read an entry', paymentId, () => store.get(paymentId)),
    byOrder: async (orderIdInput) => {
      const orderId = orderIdText(orderIdInput);
      // No payment is filed under an order id that is not well-formed text (see orderIdToKeep); Redis would read another's.
      return isWellFormedText(orderId) ? guard('read the entries of an order', undefined, () => store.byOrder(orderId)) : [];
    },
    forget: (paymentId, condition) => guard('remove an entry', paymentId, () => store.forget(paymentId, condition)),
    async *list(query) {
      const iterator = store.list(query)[Symbol.asyncIterator]();
      for (;;) {
        const next = await guard('list entries', undefined, () => iterator.next());
        if (next.done) return;
        yield next.value;
      }
    },
    record(input) {
      const { paymentId, source, amount, currency } = input;
      // Stored as the service meant it: 'succeeded ' with a stray space is still succeeded (a terminal status, not one polled for ever).
      const status = input.status === null ? null : input.status.trim();
      const orderId = orderIdToKeep(input, logger);
      const outcome = deps.classify(status);
      // Every field named, absent ones undefined: one object shape on the webhook path (a spread of inputs of varying shape is not).
      const observation: LedgerObservation = { paymentId, status, outcome, source, at: deps.now(), orderId, amount, currency };
      let answer: Awaitable<LedgerRecordResult>;
      try {
        answer = store.record(observation);
      } catch (error) {
        throw failed('record an outcome', paymentId, error);
      }
      if (!isPending(answer)) return logRecord(logger, input, outcome, answer);
      return guard('record an outcome', paymentId, () => Promise.resolve(answer)).then((result) => logRecord(logger, input, outcome, result));
    },
  };
}

/** Says what a record changed, or that a status was kept against an older one; answers the result. */
function logRecord(logger: Logger, input: LedgerInput, outcome: PaymentOutcome, result: LedgerRecordResult): LedgerRecordResult {
  const { entry, previous, changed } = result;
  if (changed) {
    logger.info({ paymentId: entry.paymentId, orderId: entry.orderId, status: entry.status, outcome: entry.outcome, from: previous?.status ?? undefined, source: input.source }, 'payment ledger updated');
  } else if (previous && input.status !== null && input.status !== entry.status && outcome !== entry.outcome) {
    logger.info({ paymentId: entry.paymentId, status: entry.status, ignored: input.status, source: input.source }, 'payment ledger kept its status: a status never moves backwards');
  }
  return result;
}

/**
 * The order id as the ledger can keep it. Half a UTF-16 surrogate pair has no UTF-8 encoding: Redis would
 * store it as U+FFFD and so file the payment under another order's id. Such an id is left out (mintWidgetToken
 * refuses it, so it names no order of the merchant's).
 */
function orderIdToKeep({ orderId, paymentId }: LedgerInput, logger: Logger): string | undefined {
  if (orderId === undefined || isWellFormedText(orderId)) return orderId;
  logger.warn({ paymentId }, 'payment names an order id that is not well-formed text (half a UTF-16 surrogate pair); recorded without it');
  return undefined;
}
