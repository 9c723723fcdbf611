import { request, type ClientRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { signWebhook } from '../../testing/index.js';
import type { SandboxPayment, WebhookDelivery, WebhookEvent } from './types.js';
import { Sleeper } from '../shared/sleeper.js';

export interface WebhookSenderOptions {
  secret: string;
  now: () => number;
  url?: string | undefined;
  attempts: number;
  baseDelayMs: number;
  timeoutMs: number;
  duplicates: number;
}

const EVENT_TYPES: Partial<Record<SandboxPayment['status'], WebhookEvent['type']>> = {
  succeeded: 'payment.succeeded',
  declined: 'payment.failed',
  canceled: 'payment.canceled',
};

/** Signs and POSTs webhooks, retrying with exponential backoff, and records every attempt. */
export class WebhookSender {
  readonly delivered: WebhookDelivery[] = [];
  readonly events: WebhookEvent[] = [];
  private url: URL | undefined;
  private closed = false;
  private readonly pending = new Set<Promise<void>>();
  private readonly sleeper = new Sleeper();
  private readonly requests = new Set<ClientRequest>();

  constructor(private readonly options: WebhookSenderOptions) {
    this.setUrl(options.url);
  }

  setUrl(url: string | undefined): void {
    if (url === undefined) {
      this.url = undefined;
      return;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`webhookUrl must be an http:// URL where your app receives webhooks, such as http://127.0.0.1:3000/pay/webhooks (got ${JSON.stringify(String(url).slice(0, 100))})`);
    }
    if (parsed.protocol !== 'http:') throw new TypeError(`webhook URL must be http: (got ${parsed.protocol})`);
    this.url = parsed;
  }

  /** Builds the event for a payment that reached a terminal status and delivers it if a URL is set. */
  paymentEvent(payment: SandboxPayment): WebhookEvent | undefined {
    const type = EVENT_TYPES[payment.status];
    if (!type || this.closed) return undefined;
    const event: WebhookEvent = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      type,
      created: Math.floor(this.options.now() / 1000),
      data: { payment_id: payment.id, status: payment.status, order_id: payment.orderId, amount: payment.amount, currency: payment.currency },
    };
    this.events.push(event);
    const url = this.url;
    if (url) {
      const body = JSON.stringify(event);
      for (let copy = 0; copy <= this.options.duplicates; copy++) this.track(this.deliver(event, body, copy, url));
    }
    return event;
  }

  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  close(): void {
    this.closed = true;
    this.sleeper.wakeAll();
    for (const req of this.requests) req.destroy(new Error('sandbox closed'));
  }

  private track(promise: Promise<void>): void {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
  }

  private async deliver(event: WebhookEvent, body: string, copy: number, url: URL): Promise<void> {
    const { attempts, baseDelayMs } = this.options;
    for (let attempt = 1; attempt <= attempts && !this.closed; attempt++) {
      // Signed by the same helper merchants use in their tests, re-signed at every attempt.
      const { headers } = signWebhook({ payload: body, secret: this.options.secret, timestamp: Math.floor(this.options.now() / 1000), eventId: event.id });
      const outcome = await this.post(url, body, headers);
      const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
      this.delivered.push({
        eventId: event.id,
        type: event.type,
        paymentId: event.data.payment_id,
        copy,
        attempt,
        url: url.href,
        status: outcome.status,
        ok,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
        ...(outcome.answer === undefined ? {} : { answer: outcome.answer }),
        timestamp: headers['x-pay-timestamp'],
        signature: headers['x-pay-signature'],
        body,
      });
      if (ok) return;
      if (attempt < attempts) await this.sleeper.sleep(baseDelayMs * 2 ** (attempt - 1));
    }
  }

  private post(url: URL, body: string, headers: Record<string, string>): Promise<PostOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      /** The status, once the receiver answered: a failure while its body comes keeps it. */
      let answered: number | null = null;
      const done = (result: PostOutcome) => {
        if (settled) return;
        settled = true;
        this.requests.delete(req);
        resolve(result);
      };
      const req = request(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'paywidget-sandbox-webhooks/1' },
        agent: false,
        timeout: this.options.timeoutMs,
      });
      this.requests.add(req);
      req.on('response', (res) => {
        answered = res.statusCode ?? null;
        // What the receiver said (why it refused, say), kept up to a limit; the rest is read and dropped.
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (chunk: Buffer) => {
          if (kept < MAX_ANSWER_BYTES) chunks.push(chunk);
          kept += chunk.length;
        });
        const finish = () => done({ status: answered, answer: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8') });
        res.on('end', finish).on('close', finish).on('error', finish);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      req.on('error', (err) => done(answered === null ? { status: null, error: err.message } : { status: answered }));
      req.end(body);
    });
  }
}

interface PostOutcome {
  status: number | null;
  error?: string;
  answer?: string;
}

/** How much of a receiver's answer a delivery record keeps. */
const MAX_ANSWER_BYTES = 2048;
