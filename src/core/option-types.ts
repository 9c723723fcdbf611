import { PayError } from './errors.js';
import type { AdminTokenStore, CheckpointStore, ClaimStore, LedgerStore, StoreOptions } from './stores/index.js';
import type { Logger } from './types.js';

/** How a wrong value is named without echoing it (it may be a secret): 'null', 'undefined', 'an array', 'a boolean'. */
export function describeKind(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

interface StoreShape {
  /** What the option must be, as the docs name it. */
  what: string;
  required: readonly string[];
  optional: readonly string[];
  /** Optional methods that only work together: some without the others is a mistake. */
  together?: readonly string[];
}

// Checked by the compiler against each interface: a method a store interface gains must be listed here.
const storeShape = <T>() => <const R extends readonly (keyof T)[], const O extends readonly (keyof T)[]>(
  what: string,
  required: R,
  optional: O & ([keyof T] extends [R[number] | O[number]] ? unknown : 'a method of the store interface is missing'),
  together?: readonly O[number][],
): StoreShape => ({ what, required: required as readonly string[], optional: optional as readonly string[], ...(together ? { together: together as readonly string[] } : {}) });

const STORES: Record<keyof StoreOptions, StoreShape> = {
  claims: storeShape<ClaimStore>()('a ClaimStore', ['claim', 'complete', 'release', 'bind'], ['renew']),
  ledger: storeShape<LedgerStore>()('a LedgerStore', ['get', 'record', 'list', 'byOrder', 'forget'], []),
  checkpoints: storeShape<CheckpointStore>()('a CheckpointStore', ['get', 'set'], ['acquireLock', 'renewLock', 'releaseLock'], ['acquireLock', 'renewLock', 'releaseLock']),
  adminTokens: storeShape<AdminTokenStore>()('an AdminTokenStore', ['get', 'set'], ['acquireRefreshLock', 'releaseRefreshLock']),
};

const LOGGER_METHODS = ['debug', 'info', 'warn', 'error'] as const satisfies readonly (keyof Logger)[];

/** The options that are functions, and what each must look like. */
const FUNCTIONS: Record<string, string> = {
  resolveCheckout: 'a function (request) => ({ amount, currency, orderId }) (or leave it out and configure the commerce platform)',
  authorize: 'a function (request) => true | false (leave it out to let every request through)',
  authorizeOrder: 'a function (request, order) => true | false (whether the request may pay the order it names)',
  now: 'a function answering the time in milliseconds, such as Date.now',
};

const SECTION_NAMES = ['payment', 'commerce', 'http', 'env', 'webhooks', 'payments', 'stores'] as const;

/**
 * Refuses, at createPay (CONFIG_INVALID), options of the wrong kind that would otherwise fail per request:
 * a hook that is not a function, a logger or store lacking a method, a section that is not an object.
 * Values are never echoed (they may be secrets), only their kind.
 */
export function checkOptionTypes(options: object): void {
  const problems: Array<{ option: string; problem: string }> = [];
  const values = options as Record<string, unknown>;

  for (const section of SECTION_NAMES) {
    const value = values[section];
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
      problems.push({ option: section, problem: `must be an object, got ${describeKind(value)}` });
    }
  }
  for (const [option, what] of Object.entries(FUNCTIONS)) {
    const value = values[option];
    if (value !== undefined && typeof value !== 'function') problems.push({ option, problem: `must be ${what}, got ${describeKind(value)}` });
  }

  const logger = values.logger;
  if (logger !== undefined) {
    const lacking = typeof logger === 'object' && logger !== null ? LOGGER_METHODS.filter((m) => typeof (logger as Record<string, unknown>)[m] !== 'function') : [...LOGGER_METHODS];
    if (lacking.length > 0) {
      const got = typeof logger === 'object' && logger !== null ? `it has no ${lacking.join(', ')} function${lacking.length === 1 ? '' : 's'}` : `got ${describeKind(logger)}`;
      problems.push({ option: 'logger', problem: `must be a pino-compatible logger with debug, info, warn and error functions (${got}); pass a pino logger, console, or silentLogger to mute the library` });
    }
  }

  const stores = values.stores;
  if (typeof stores === 'object' && stores !== null && !Array.isArray(stores)) {
    for (const [name, shape] of Object.entries(STORES)) {
      const store = (stores as Record<string, unknown>)[name];
      if (store === undefined) continue;
      const option = `stores.${name}`;
      if ((typeof store !== 'object' && typeof store !== 'function') || store === null) {
        problems.push({ option, problem: `must be ${shape.what} (an object with the methods ${shape.required.join(', ')}), got ${describeKind(store)}` });
        continue;
      }
      const method = (m: string) => (store as Record<string, unknown>)[m];
      const lacking = shape.required.filter((m) => typeof method(m) !== 'function');
      if (lacking.length > 0) {
        problems.push({ option, problem: `must be ${shape.what}, with the methods ${shape.required.join(', ')}: it has no ${lacking.join(', ')} function${lacking.length === 1 ? '' : 's'}` });
      }
      const notFunctions = shape.optional.filter((m) => method(m) !== undefined && typeof method(m) !== 'function');
      if (notFunctions.length > 0) {
        problems.push({ option, problem: `has ${notFunctions.join(', ')} that ${notFunctions.length === 1 ? 'is not a function' : 'are not functions'}: these methods are optional, leave them out or make them functions` });
      }
      const together = shape.together ?? [];
      const present = together.filter((m) => typeof method(m) === 'function');
      if (present.length > 0 && present.length < together.length) {
        const missing = together.filter((m) => !present.includes(m));
        problems.push({ option, problem: `has ${present.join(', ')} but no ${missing.join(', ')}: give all of ${together.join(', ')} or none (with some only, they are not used at all)` });
      }
    }
  }

  if (problems.length === 0) return;
  throw new PayError('CONFIG_INVALID', `paywidget-server configuration: ${problems.map((p) => `${p.option} ${p.problem}`).join('; ')}.`, {
    details: { options: problems.map((p) => p.option) },
  });
}

/** The argument of createPay: an options object, or nothing (every setting from the environment). */
export function checkOptionsObject(options: unknown): asserts options is object {
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) return;
  throw new PayError('CONFIG_INVALID', `paywidget-server configuration: createPay takes an options object, got ${describeKind(options)}. Call createPay({ ... }), or createPay() to read every setting from the environment.`);
}
