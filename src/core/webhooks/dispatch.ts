import { isPending, type Awaitable } from '../awaitable.js';
import { invalidInput } from '../errors.js';
import { describeKind } from '../option-types.js';
import type { Logger } from '../types.js';
import { WebhookHandlerError } from './errors.js';

/** A verified, deduplicated (first-time) delivery, as your handlers get it. */
export interface WebhookEvent {
  /**
   * The event id: the signed payload's (`webhooks.payloadEventId`, by default its `id`), which X-Pay-Event-Id matched;
   * X-Pay-Event-Id itself when the payload carries none. The event is deduplicated on it.
   */
  readonly id: string;
  /** From `webhooks.eventType(payload)`, by default the payload's `type` field; undefined when there is none. */
  readonly type: string | undefined;
  /** The body parsed as JSON. */
  readonly payload: unknown;
  /** X-Pay-Timestamp, Unix seconds. */
  readonly timestamp: number;
}

/** May be async; throwing (or rejecting) answers the delivery 500 so the sender retries it. */
export type WebhookHandler = (event: WebhookEvent) => unknown;

/** A handler registered for some types: the event it gets is of one of them. */
export type WebhookHandlerOf<Type extends string> = (event: WebhookEvent & { readonly type: Type }) => unknown;
/** One failure of one handler (or of the `eventType` extractor) for one event. */
export interface WebhookFailure {
  /** What the handler threw (a non-Error value arrives wrapped, as `cause`). */
  error: Error;
  /** The event whose handler failed. */
  event: WebhookEvent;
}
/** Told about each handler failure; cannot turn it into a success (the delivery is still answered 500). */
export type WebhookErrorHandler = (failure: WebhookFailure) => unknown;

export interface Dispatcher {
  on<Type extends string>(type: Type | readonly Type[], handler: WebhookHandlerOf<Type>): () => void;
  onAny(handler: WebhookHandler): () => void;
  onError(handler: WebhookErrorHandler): () => void;
  /**
   * Names the event's type, then runs the handlers for that type and the onAny handlers, concurrently.
   * Throws WebhookHandlerError when any of them (or the type extractor) fails, after telling onError.
   * Answers at once when every handler did (a promise only when one returned a promise, or failed).
   */
  dispatch(delivery: Omit<WebhookEvent, 'type'>): Awaitable<void>;
}

/**
 * The on / onAny / onError registry. Each registration returns a function that removes it.
 * `internal` handlers (the library's own, e.g. the payment ledger) run first, one after another, for
 * every event; the merchant's run only once they succeeded, so they see what the library recorded.
 * An internal handler's failure is thrown as it is, without WebhookHandlerError or onError.
 */
export function createDispatcher(logger: Logger, eventType: (payload: unknown) => string | undefined, internal: readonly WebhookHandler[] = []): Dispatcher {
  const byType = new Map<string, WebhookHandler[]>();
  const any: WebhookHandler[] = [];
  const errorHandlers: WebhookErrorHandler[] = [];

  /** Registers a handler its caller has checked. */
  const add = <H>(list: H[], handler: H) => {
    list.push(handler);
    return () => {
      const at = list.indexOf(handler);
      if (at !== -1) list.splice(at, 1);
    };
  };

  return {
    on(type, handler) {
      const types = eventTypes(type);
      // Checked before any type takes it: a refused handler is registered under none of them.
      checkHandler(handler, 'on');
      const removers = types.map((t) => {
        let list = byType.get(t);
        if (!list) byType.set(t, (list = []));
        // Run only for events of type t, so the narrower event it takes is the one it gets.
        return add(list, handler as WebhookHandler);
      });
      return () => removers.forEach((remove) => remove());
    },
    onAny(handler) {
      checkHandler(handler, 'onAny');
      return add(any, handler);
    },
    onError(handler) {
      checkHandler(handler, 'onError');
      return add(errorHandlers, handler);
    },

    dispatch({ id, payload, timestamp }) {
      let type: string | undefined;
      let extractorFailure: Error | undefined;
      try {
        type = eventType(payload);
      } catch (error) {
        extractorFailure = asError(error);
      }
      const event: WebhookEvent = Object.freeze({ id, type, payload, timestamp });
      if (extractorFailure) return reportFailures([extractorFailure], event);
      // The library's own failure is not a handler's: thrown as it is (a ledger store outage answers 503), onError not told.
      const recorded = runInOrder(internal, event);
      return isPending(recorded) ? recorded.then(() => runMerchantHandlers(event)) : runMerchantHandlers(event);
    },
  };

  function runMerchantHandlers(event: WebhookEvent): Awaitable<void> {
    const typed = event.type === undefined ? undefined : byType.get(event.type);
    // A copy when several run: one that unsubscribes (itself or another) must not shift the list being run.
    const handlers = typed !== undefined ? [...typed, ...any] : any.length > 1 ? [...any] : any;
    const errors = runHandlers(handlers, event, logger);
    if (!isPending(errors)) return errors.length === 0 ? undefined : reportFailures(errors, event);
    return errors.then((list) => (list.length === 0 ? undefined : reportFailures(list, event)));
  }

  /** Tells every onError handler of every failure, then throws them together. */
  async function reportFailures(errors: readonly Error[], event: WebhookEvent): Promise<never> {
    for (const error of errors) {
      for (const handler of [...errorHandlers]) {
        try {
          await handler({ error, event });
        } catch (onErrorFailure) {
          logger.error({ err: onErrorFailure, eventId: event.id }, 'webhook onError handler threw');
        }
      }
    }
    throw new WebhookHandlerError(event, [...errors]);
  }
}

const HANDLER_USAGE = {
  on: "webhooks.on('payment.succeeded', async (event) => { ... })",
  onAny: 'webhooks.onAny(async (event) => { ... })',
  onError: 'webhooks.onError(({ error, event }) => { ... })',
} as const;

function checkHandler(handler: unknown, call: keyof typeof HANDLER_USAGE): void {
  if (typeof handler === 'function') return;
  throw invalidInput('handler', `paywidget-server: webhooks.${call} takes a function as its handler, got ${describeKind(handler)}: pass the function itself, such as ${HANDLER_USAGE[call]}.`);
}

/** The types `on` was given, or INVALID_INPUT saying how to call it (a handler passed alone would fail as "type is not iterable"). */
function eventTypes(type: unknown): string[] {
  const usage = "webhooks.on(type, handler) takes the event type first, such as webhooks.on('payment.succeeded', handler), or several as an array; use webhooks.onAny(handler) for every event";
  if (typeof type === 'function') throw invalidInput('type', `paywidget-server: webhooks.on was given a function where the event type goes: ${usage}.`);
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? [...(type as unknown[])] : undefined;
  if (types === undefined || types.length === 0 || types.some((t) => typeof t !== 'string' || t === '')) {
    throw invalidInput('type', `paywidget-server: webhooks.on needs a non-empty event type (a string, or an array of them), got ${types === undefined ? describeKind(type) : types.length === 0 ? 'an empty array' : 'an empty or non-string type'}: ${usage}.`);
  }
  // A type listed twice (a list built from configuration) is one type: its handler runs once per event.
  return [...new Set(types as string[])];
}

const NO_ERRORS: readonly Error[] = Object.freeze([]);

/** The library's own handlers, one after another; at once while none of them returns a promise. */
function runInOrder(handlers: readonly WebhookHandler[], event: WebhookEvent): Awaitable<unknown> {
  for (let i = 0; i < handlers.length; i++) {
    const ran = handlers[i]!(event);
    if (isPending(ran)) return Promise.resolve(ran).then(() => runInOrder(handlers.slice(i + 1), event));
  }
  return undefined;
}

/** The merchant's handlers, concurrently; their failures, at once when none of them returned a promise. */
function runHandlers(handlers: readonly WebhookHandler[], event: WebhookEvent, logger: Logger): Awaitable<readonly Error[]> {
  if (handlers.length === 0) {
    logger.debug({ eventId: event.id, type: event.type }, 'webhook event has no handler');
    return NO_ERRORS;
  }
  if (handlers.length === 1) {
    // The usual case, without allSettled's bookkeeping.
    let ran: unknown;
    try {
      ran = handlers[0]!(event);
    } catch (error) {
      return [asError(error)];
    }
    return isPending(ran) ? Promise.resolve(ran).then(() => NO_ERRORS, (error: unknown) => [asError(error)]) : NO_ERRORS;
  }
  return Promise.allSettled(handlers.map((handler) => invoke(handler, event)))
    .then((results) => results.flatMap((r) => (r.status === 'rejected' ? [asError(r.reason)] : [])));
}

function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error('A webhook handler threw a value that is not an Error; see `cause`.', { cause: thrown });
}

async function invoke(handler: WebhookHandler, event: WebhookEvent): Promise<unknown> {
  return handler(event);
}
