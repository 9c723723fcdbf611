import { randomBytes } from 'node:crypto';
import { ApiError } from '../shared/http.js';
import { MAX_TIMER_MS } from '../../core/max-timer.js';
import type { SandboxPayment, SandboxPaymentMethod, SandboxPaymentStatus } from './types.js';

export const PAYMENT_STATUSES: readonly SandboxPaymentStatus[] = ['processing', 'requires_action', 'pending', 'succeeded', 'declined', 'canceled'];
export const TERMINAL_STATUSES: ReadonlySet<SandboxPaymentStatus> = new Set(['succeeded', 'declined', 'canceled']);

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
export type PaymentRecord = Mutable<SandboxPayment> & { clientSecret?: string };

export interface NewPayment {
  method: SandboxPaymentMethod;
  amount: number;
  currency: string;
  orderId: string;
  status: SandboxPaymentStatus;
  cardLast4?: string;
  savedPaymentMethodId?: string;
  declineCode?: string;
  returnUrl?: string;
  clientSecret?: string;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** Payments and their transitions; `onTerminal` is told about every terminal status reached. */
export class PaymentStore {
  private readonly payments = new Map<string, PaymentRecord>();
  private readonly confirmTimers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly now: () => number,
    private readonly onTerminal: (payment: SandboxPayment) => void,
    public confirmDelayMs: number,
  ) {}

  create(input: NewPayment): PaymentRecord {
    const at = this.now();
    const id = `pay_${hex(12)}`;
    const payment: PaymentRecord = { id, paymentClientToken: `pct_${hex(16)}`, createdAt: at, updatedAt: at, ...input };
    if (input.method === 'card' && input.clientSecret === undefined) payment.clientSecret = `${id}_secret_${hex(12)}`;
    this.payments.set(id, payment);
    if (TERMINAL_STATUSES.has(payment.status)) this.onTerminal(snapshot(payment));
    return payment;
  }

  /** A payment that is going to succeed: at once, after `confirmDelayMs`, or (Infinity) never on its own. */
  confirm(payment: PaymentRecord): void {
    const delay = this.confirmDelayMs;
    if (delay <= 0) return this.transition(payment, 'succeeded');
    this.transition(payment, 'processing');
    // Past MAX_TIMER_MS Node would fire after 1 ms: a delay that long means never, like Infinity.
    if (delay > MAX_TIMER_MS) return;
    const timer = setTimeout(() => {
      this.confirmTimers.delete(payment.id);
      if (payment.status === 'processing') this.transition(payment, 'succeeded');
    }, delay);
    this.confirmTimers.set(payment.id, timer);
  }

  get(id: string): PaymentRecord | undefined {
    return this.payments.get(id);
  }

  /** 404 `payment_not_found` for an unknown id. */
  require(id: string): PaymentRecord {
    const payment = this.payments.get(id);
    if (!payment) throw new ApiError(404, 'payment_not_found', 'No payment with this id.');
    return payment;
  }

  snapshot(id: string): SandboxPayment | undefined {
    const payment = this.payments.get(id);
    return payment && snapshot(payment);
  }

  list(): SandboxPayment[] {
    return [...this.payments.values()].map(snapshot);
  }

  /** Forced by a test: any status, and the webhook is sent again for a terminal one. */
  setStatus(id: string, status: SandboxPaymentStatus): void {
    if (!PAYMENT_STATUSES.includes(status)) throw new TypeError(`unknown payment status: ${String(status)}`);
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`no sandbox payment ${id}`);
    this.transition(payment, status, status === 'declined' ? (payment.declineCode ?? 'generic_decline') : undefined);
  }

  /** The 3DS challenge outcome; 409 `invalid_state` unless the payment awaits it. */
  completeChallenge(id: string, pass: boolean): PaymentRecord {
    const payment = this.requireState(id, 'requires_action', 'is not waiting for a 3DS challenge');
    if (pass) this.confirm(payment);
    else this.transition(payment, 'declined', 'authentication_failed');
    return payment;
  }

  /** The bank's decision for a pay-by-bank payment; 409 `invalid_state` unless it is pending. */
  decideBank(id: string, approve: boolean): PaymentRecord {
    const payment = this.requireState(id, 'pending', 'is not a pending pay-by-bank payment');
    if (payment.method !== 'pay_by_bank') throw new ApiError(409, 'invalid_state', 'The payment is not a pay-by-bank payment.');
    if (approve) this.transition(payment, 'succeeded');
    else this.transition(payment, 'declined', 'bank_declined');
    return payment;
  }

  close(): void {
    for (const timer of this.confirmTimers.values()) clearTimeout(timer);
    this.confirmTimers.clear();
  }

  private requireState(id: string, status: SandboxPaymentStatus, problem: string): PaymentRecord {
    const payment = this.require(id);
    if (payment.status !== status) throw new ApiError(409, 'invalid_state', `The payment ${problem} (status ${payment.status}).`);
    return payment;
  }

  private transition(payment: PaymentRecord, status: SandboxPaymentStatus, declineCode?: string): void {
    const timer = this.confirmTimers.get(payment.id);
    if (timer) {
      clearTimeout(timer);
      this.confirmTimers.delete(payment.id);
    }
    payment.status = status;
    payment.updatedAt = this.now();
    if (declineCode !== undefined) payment.declineCode = declineCode;
    else if (status !== 'declined') delete payment.declineCode;
    if (TERMINAL_STATUSES.has(status)) this.onTerminal(snapshot(payment));
  }
}

function snapshot(payment: PaymentRecord): SandboxPayment {
  const { clientSecret: _secret, ...rest } = payment;
  return Object.freeze({ ...rest });
}
