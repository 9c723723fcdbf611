import { untilAborted } from '../abort-listeners.js';
import type { HttpPolicy } from '../config.js';
import { invalidInput, PayError, UpstreamError, type PayErrorCode } from '../errors.js';
import { MAX_TIMER_MS } from '../max-timer.js';
import { sleep } from '../sleep.js';
import type { LedgerEntry, LedgerRecordResult, LedgerSource } from '../stores/ledger-store.js';
import type { Logger } from '../types.js';
import { recordPoll, type Ledger } from './ledger.js';
import { checkPaymentId, toClientToken, type PaymentStatus, type StatusOptions } from './status.js';

/** Options of `pay.payments.reconcile()`. */
export interface ReconcileOptions extends StatusOptions {
  /** How long to poll for a terminal status (default `payments.pollBudgetMs`, 10 s). 0 polls once, with the usual HTTP time-outs. */
  budgetMs?: number | undefined;
  /** Stops polling early; the answer is then needs_reconciliation (unless the ledger already knows). */
  signal?: AbortSignal | undefined;
}

/** Confirmed or failed (terminal), or needs_reconciliation: not terminal within the budget, ask again later. */
export type ReconcileOutcome = 'confirmed' | 'failed' | 'needs_reconciliation';

/** The answer of `pay.payments.reconcile()`. Holds no credential. */
export interface ReconcileResult {
  /** The service's payment id. */
  paymentId: string;
  /** The last status known; null when no poll succeeded and the ledger knew nothing. */
  status: string | null;
  /** What to do: fulfil on confirmed, not on failed, and with needs_reconciliation leave it to a webhook or the sweep. */
  outcome: ReconcileOutcome;
  /** How that status was learned (a webhook may have arrived while this call polled); null with a null status. */
  source: LedgerSource | null;
  /**
   * With needs_reconciliation: the payment service asked to wait this long (ms) before polling again
   * (a 429 or 503 with Retry-After), longer than the budget had left. Poll no sooner.
   */
  retryAfterMs?: number;
  /**
   * With needs_reconciliation: why the last poll learned nothing, when it failed (the service unreachable, a
   * time-out, a 5xx). A `PAY_API_URL` pointing nowhere reads like a payment still pending without it.
   */
  lastError?: { code: PayErrorCode; message: string };
  /** The merchant's order id, when the service or a webhook said it. */
  orderId?: string;
  /** Integer minor units, when the service or a webhook said them. */
  amount?: number;
  /** ISO 4217 code, when the service or a webhook said it. */
  currency?: string;
}

/**
 * What this call's own records changed in the ledger: a status it reports is its own only while the entry still
 * holds the one its last change left (another caller may have moved it on since: that move is theirs to report).
 */
export interface LearnedHere {
  /** The status the last of this call's records that changed the entry left there; absent while none did. */
  status?: string | null;
}

/** Notes a record of this call's that changed the entry. */
function learnedHere(learned: LearnedHere, { entry, changed }: { entry: LedgerEntry; changed: boolean }): void {
  if (changed) learned.status = entry.status;
}

/** How a reconcile runs, beyond its public options. */
export interface ReconcileHow {
  /**
   * The reconcile route's: a poll in flight when the page goes away runs to its end and records its answer. Not a
   * sweep's: an answer recorded after it stopped would be in no report, and the next sweep would not list the payment.
   */
  finishPollInFlight?: boolean;
  /**
   * A sweep's: a payment still unresolved at the end of its budget is a line of the sweep's report (and a debug
   * line), not a warning at every run while the shopper has not finished (a bank transfer left pending). One the
   * service could not answer about is still a warning.
   */
  inSweep?: boolean;
}

export interface ReconcileDeps {
  ledger: Ledger;
  poll: (paymentId: string, options: StatusOptions, policy: Partial<HttpPolicy>) => Promise<PaymentStatus>;
  http: HttpPolicy;
  logger: Logger;
  pollBudgetMs: number;
  pollIntervalMs: number;
  pollMaxIntervalMs: number;
}

/** The shortest window a poll gets: a poll given no time is no poll. The first poll gets it even from a smaller budget; later ones only while it fits. */
const MIN_POLL_MS = 200;

function toReconcileResult(paymentId: string, entry: LedgerEntry | undefined): ReconcileResult {
  const result: ReconcileResult = {
    paymentId,
    status: entry?.status ?? null,
    outcome: entry?.outcome === 'confirmed' || entry?.outcome === 'failed' ? entry.outcome : 'needs_reconciliation',
    source: entry && entry.status !== null ? entry.source : null,
  };
  if (entry?.orderId !== undefined) result.orderId = entry.orderId;
  if (entry?.amount !== undefined) result.amount = entry.amount;
  if (entry?.currency !== undefined) result.currency = entry.currency;
  return result;
}

/** Errors that polling again cannot fix: bad input or configuration, an unknown payment, a refused credential. */
function isPermanent(error: unknown): boolean {
  if (!(error instanceof PayError)) return true;
  if (error instanceof UpstreamError) return error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
  // A redirect, an answer that is not HTTP, or another server's 404 page says the configured address is wrong: polling it again gets the same.
  if (error.details?.redirect === true || error.details?.notHttp === true || error.details?.wrongAddress === true) return true;
  return ['INVALID_INPUT', 'CONFIG_MISSING', 'CONFIG_INVALID', 'PAYMENT_NOT_FOUND', 'STORE_UNAVAILABLE'].includes(error.code);
}

/** A poll budget as given, or INVALID_INPUT: a number of milliseconds, 0 or more. */
export function checkBudgetMs(budgetMs: number): number {
  if (!Number.isFinite(budgetMs) || budgetMs < 0) throw invalidInput('budgetMs', `budgetMs must be a number of milliseconds, 0 or more (got ${String(budgetMs)}).`);
  return budgetMs;
}

/**
 * Polls the status endpoint with back-off and jitter until the payment reaches a terminal status or
 * the budget runs out, recording every answer in the ledger. A confirmation already in the ledger
 * (a webhook got there first) answers at once. When the budget runs out the answer is
 * `needs_reconciliation`, never an exception, and the payment stays in the ledger for the sweep;
 * transport failures and 5xx along the way only cost polls. Permanent refusals (unknown payment,
 * wrong credentials, bad input) throw.
 */
export async function reconcilePayment(deps: ReconcileDeps, paymentIdInput: string, options: ReconcileOptions = {}, learned: LearnedHere = {}, how: ReconcileHow = {}): Promise<ReconcileResult> {
  const paymentId = checkPaymentId(paymentIdInput);
  const clientToken = toClientToken(options.clientToken);
  const budgetMs = checkBudgetMs(options.budgetMs ?? deps.pollBudgetMs);
  // Confirmed is final. Failed is asked once more: a confirmation outranks it (a bank payment approved
  // after it was canceled), and the webhook that would have said so may have been lost.
  const known = await deps.ledger.get(paymentId);
  if (known?.outcome === 'confirmed') return toReconcileResult(paymentId, known);
  if (known?.outcome === 'failed') return toReconcileResult(paymentId, (await recheckPayment(deps, paymentId, { clientToken, signal: options.signal, budgetMs }, learned)) ?? known);

  const started = performance.now(); // a budget of real time, which a step of the wall clock does not stretch
  const deadline = started + budgetMs;
  let polls = 0;
  /** Whether the service answered, or failed to, at least once; not when the caller went away before. */
  let heard = false;
  let lastError: PayError | undefined;
  /** How long the service asked to wait after the last poll (Retry-After). */
  let retryAfter: number;
  for (let attempt = 0; ; attempt++) {
    retryAfter = 0;
    const window = Math.max(MIN_POLL_MS, deadline - performance.now());
    // The loop is the retry, with its own back-off: retried inside callUpstream too, each poll of a failing
    // service became three calls (22 a request over the default budget, for any made-up payment id).
    const policy = budgetMs === 0 ? {} : { maxRetries: 0, totalTimeoutMs: Math.min(deps.http.totalTimeoutMs, window), attemptTimeoutMs: Math.min(deps.http.attemptTimeoutMs, window) };
    if (options.signal?.aborted) break; // gone before this poll: none is started
    try {
      polls += 1;
      const recorded = how.finishPollInFlight
        // The caller's signal ends the wait, not the poll in flight: its answer is recorded though nobody waits for
        // it (a shopper who reloads the page mid-poll), so the ledger holds what the service said, under its order.
        ? await untilAborted(pollAndRecord(deps, paymentId, clientToken, policy), options.signal)
        : await recordPoll(deps.ledger, await deps.poll(paymentId, { clientToken, signal: options.signal }, policy));
      heard = true;
      lastError = undefined; // the service answered: an earlier failure is no longer why nothing is known
      learnedHere(learned, recorded);
      const { entry, changed } = recorded;
      if (changed && entry.orderId === undefined && entry.outcome !== 'failed') warnOrderUnknown(deps.logger, entry);
      if (entry.outcome !== 'unresolved') return toReconcileResult(paymentId, entry);
    } catch (error) {
      // Stopped by the caller mid-poll: what is known so far is the answer, as when the budget runs out.
      if (options.signal?.aborted) break;
      if (isPermanent(error)) throw error;
      heard = true;
      lastError = error as PayError;
      retryAfter = (error instanceof UpstreamError && error.retryAfterMs) || 0;
    }
    // Another poll needs its shortest window before the deadline, else the budget would be overrun; and
    // none goes out sooner than the service asked (polling through a rate limit only prolongs it).
    const left = deadline - performance.now() - MIN_POLL_MS;
    // (A wait past Node's longest timer would fire after 1 ms: it too ends the polling.)
    if (left < retryAfter || left < 0 || retryAfter > MAX_TIMER_MS || options.signal?.aborted) break;
    const ceiling = Math.min(deps.pollMaxIntervalMs, deps.pollIntervalMs * 2 ** attempt);
    // Equal jitter: never a burst of immediate polls, never all clients in step.
    const pause = Math.max(retryAfter, Math.min(left, ceiling / 2 + Math.random() * (ceiling / 2)));
    if (!(await sleep(pause, options.signal))) break;
  }

  // The caller went away before the service said anything: nothing was learned, and nothing is recorded. A payment id
  // is anyone's to send to the reconcile route, and one hung up on at once would otherwise be an entry the sweep polls,
  // without end in a store with no cap (Redis). A real payment's webhook, or the next call, records it.
  if (!heard) return toReconcileResult(paymentId, await deps.ledger.get(paymentId));
  // Out of budget. A webhook may have landed meanwhile; and a payment nobody could read is still recorded, so the sweep finds it.
  const recorded = await deps.ledger.record({ paymentId, status: null, source: 'poll' });
  learnedHere(learned, recorded);
  const result = toReconcileResult(paymentId, recorded.entry);
  if (result.outcome === 'needs_reconciliation') {
    if (retryAfter > 0) result.retryAfterMs = retryAfter;
    if (lastError) result.lastError = { code: lastError.code, message: lastError.message };
    // In a sweep, a payment the service answered about but that is still under way is its summary's; one the service
    // could not answer about (5xx, time-out) is a warning there too, or an outage would pass without a word.
    deps.logger[how.inSweep && lastError === undefined ? 'debug' : 'warn']({ paymentId, status: result.status, polls, elapsedMs: Math.round(performance.now() - started), lastError: lastError?.code, reason: lastError?.message, retryAfterMs: result.retryAfterMs }, 'payment still unresolved after the poll budget; it needs reconciliation (sweep or webhook)');
  }
  return result;
}

/** One poll, its answer recorded; a failure is the caller's to handle, and swallowed when nobody waits for it. */
function pollAndRecord(deps: ReconcileDeps, paymentId: string, clientToken: StatusOptions['clientToken'], policy: Partial<HttpPolicy>): Promise<LedgerRecordResult> {
  const recorded = deps.poll(paymentId, { clientToken }, policy).then((status) => recordPoll(deps.ledger, status));
  recorded.catch(() => {});
  return recorded;
}

/** A second look waits on one attempt of at most this long (and no longer than a reconcile's budget, its shortest poll at least). */
const RECHECK_TIMEOUT_MS = 3_000;

/**
 * One quick poll of a payment whose answer the ledger already has (failed), recorded, then the ledger's
 * entry; but unresolved, with the service's status, when the service says the payment is under way again:
 * the ledger does not step back from failed (a stale poll must not undo a failure), yet a payment that may
 * still confirm must stop a second charge. Best effort: a refusal, a time-out or a missing credential leave
 * the ledger's answer standing (logged); only a ledger store that fails throws.
 */
export async function recheckPayment(deps: Pick<ReconcileDeps, 'ledger' | 'poll' | 'http' | 'logger'>, paymentId: string, options: StatusOptions & { budgetMs?: number } = {}, learned: LearnedHere = {}): Promise<LedgerEntry | undefined> {
  const { budgetMs, ...statusOptions } = options;
  // A budget of 0 is one poll under the usual time-outs, as in reconcilePayment.
  const quick = Math.min(deps.http.attemptTimeoutMs, RECHECK_TIMEOUT_MS, budgetMs ? Math.max(MIN_POLL_MS, budgetMs) : Infinity);
  let now: PaymentStatus | undefined;
  let recorded: LedgerRecordResult | undefined;
  try {
    now = await deps.poll(paymentId, statusOptions, { maxRetries: 0, attemptTimeoutMs: quick, totalTimeoutMs: quick });
    recorded = await recordPoll(deps.ledger, now);
    learnedHere(learned, recorded);
  } catch (error) {
    if (error instanceof PayError && error.code === 'STORE_UNAVAILABLE') throw error;
    deps.logger.warn({ err: error, paymentId }, 'the payment service could not be asked about a failed payment again; going by what the ledger holds');
  }
  // The record answers the entry it left; read only when the service could not be asked.
  const entry = recorded?.entry ?? (await deps.ledger.get(paymentId));
  if (entry?.outcome === 'failed' && now?.outcome === 'unresolved') return { ...entry, status: now.status, outcome: 'unresolved', source: 'poll' };
  return entry;
}

/**
 * The mint guard finds a payment under way by its order: one whose order nobody named (the payment document
 * shows no status body beyond the id and status, and webhooks may not have come) does not stop a second charge.
 */
function warnOrderUnknown(logger: Logger, entry: LedgerEntry): void {
  logger.warn({ paymentId: entry.paymentId, status: entry.status },
    `payment ${entry.paymentId} is ${entry.status ?? 'of unknown status'}, but neither its status answer nor a webhook named its order (no order_id), so POST /widget-token cannot tell that order is being paid and would mint for it again. If the service's webhooks name the order under another field, read it with payments.extractPayment.`);
}
