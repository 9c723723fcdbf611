import { builtinModuleLoader } from './builtin-module.js';

type NodeEvents = {
  defaultMaxListeners: number;
  getMaxListeners(target: EventTarget): number;
  setMaxListeners(n: number, ...targets: EventTarget[]): void;
};

let events: NodeEvents | undefined | null = null;

/**
 * Raises Node's listener-leak warning limit on a signal, as fetch does for the signals it is given: one
 * signal shared by many calls in flight (a shutdown signal, a sweep's workers) is no leak, and Node 20 would
 * warn past 10 listeners. A limit its owner set is kept. Nothing to do where there is no node:events (edge).
 */
function allowManyListeners(signal: AbortSignal): void {
  if (events === null) events = builtinModuleLoader()?.('node:events') as NodeEvents | undefined;
  if (typeof events?.getMaxListeners !== 'function' || typeof events.setMaxListeners !== 'function') return;
  if (events.getMaxListeners(signal) === events.defaultMaxListeners) events.setMaxListeners(1500, signal);
}

/** Listens once for the abort of a signal the library was given, its listener-leak warning limit raised first. */
export function listenForAbort(signal: AbortSignal, listener: () => void): void {
  allowManyListeners(signal);
  signal.addEventListener('abort', listener, { once: true });
}

/**
 * The promise's outcome, or the signal's reason as soon as it aborts (the promise goes on, its outcome unheard).
 * The listener goes once the promise settles: the signal may outlive many such waits (a caller's, a shutdown's).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    listenForAbort(signal, onAbort);
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
