import { randomBytes } from 'node:crypto';
import { Router } from '../shared/router.js';
import { SandboxServer } from '../shared/server.js';
import { FaultSet, faultResponse, serveFault } from '../payment/faults.js';
import type { FaultRule } from '../payment/types.js';
import { addCommerceRoutes, noRoute, type CommerceContext } from './api.js';
import { AdminAuth } from './auth.js';
import { OrderStore, parseSeconds } from './store.js';
import type { CommerceSandboxOptions, SandboxCommerce } from './types.js';

export interface StartedCommerce {
  url: string;
  username: string;
  password: string;
  control: SandboxCommerce;
  close(): Promise<void>;
}

function count(name: string, value: number, min = 0): number {
  if (!Number.isSafeInteger(value) || value < min) throw new TypeError(`commerce.${name} must be an integer of ${min} or more`);
  return value;
}

/** An injected answer; an error status without a body gets a Magento-style body. */
function injected(rule: FaultRule) {
  if (rule.status !== undefined && rule.body === undefined && !rule.malformed) {
    return faultResponse({ ...rule, body: JSON.stringify({ message: `Fault injected by the sandbox (HTTP ${rule.status}).` }) });
  }
  return faultResponse(rule);
}

/** Starts the fake commerce platform (Magento 2 REST) on 127.0.0.1. */
export async function startCommerce(options: CommerceSandboxOptions, now: () => number): Promise<StartedCommerce> {
  const username = options.username ?? 'sandbox_admin';
  const password = options.password ?? `pw_${randomBytes(12).toString('hex')}`;
  const start = parseSeconds(options.startDate ?? '2025-01-01 00:00:00');
  if (start === undefined) throw new TypeError("commerce.startDate must be 'YYYY-MM-DD HH:MM:SS'");
  const store = new OrderStore({
    seed: count('seed', options.seed ?? 1),
    count: count('orders', options.orders ?? 50),
    start,
    spread: count('spreadDays', options.spreadDays ?? 365) * 86_400,
  });
  const auth = new AdminAuth({
    username,
    password,
    now,
    tokenLifetimeMs: count('tokenLifetimeMs', options.tokenLifetimeMs ?? 4 * 3_600_000, 1),
    lockoutFailures: count('lockoutFailures', options.lockoutFailures ?? 6, 1),
    lockoutMs: count('lockoutMs', options.lockoutMs ?? 30 * 60_000),
    twoFactor: options.twoFactor ?? false,
  });
  const pageSizeOption = (name: string, max: number | undefined) => (max === undefined ? undefined : count(name, max, 1));
  const cx: CommerceContext = {
    auth,
    store,
    scopes: new Set(['default', 'all']),
    lastPageAgain: options.lastPageAgain ?? false,
    maxPageSize: pageSizeOption('maxPageSize', options.maxPageSize),
    silentPageSizeCap: pageSizeOption('silentPageSizeCap', options.silentPageSizeCap),
    counts: { orderReads: 0, searches: 0 },
  };
  const router = new Router();
  const faults = new FaultSet(router, '/rest/');
  addCommerceRoutes(router, cx);
  const concurrency = { now: 0, max: 0 };
  const server: SandboxServer = new SandboxServer(router, async (method, path, res) => {
    concurrency.now += 1;
    concurrency.max = Math.max(concurrency.max, concurrency.now);
    res.once('close', () => void (concurrency.now -= 1));
    return serveFault(server, faults, method, path, res, injected);
  }, noRoute);
  const url = await server.listen(options.port ?? 0);

  const control: SandboxCommerce = {
    faults,
    get orderCount() {
      return store.size;
    },
    order: (id) => store.get(id),
    addOrder: (partial = {}, { committed = true } = {}) => store.add(partial, Math.floor(now() / 1000), committed),
    commitOrder: (id) => store.commit(id),
    setOrder: (id, patch) => store.set(id, patch, Math.floor(now() / 1000)),
    expireTokens: () => auth.expireAll(),
    setPassword: (password) => auth.setPassword(password),
    issuedTokens: () => auth.issued(),
    setTwoFactor: (enabled) => {
      auth.twoFactor = enabled;
    },
    setLastPageAgain: (enabled) => {
      cx.lastPageAgain = enabled;
    },
    setMaxPageSize: (max) => {
      cx.maxPageSize = pageSizeOption('maxPageSize', max);
    },
    setSilentPageSizeCap: (max) => {
      cx.silentPageSizeCap = pageSizeOption('silentPageSizeCap', max);
    },
    stats: () => ({ ...auth.counts, ...cx.counts, maxConcurrentRequests: concurrency.max }),
    resetStats: () => {
      concurrency.max = concurrency.now;
      Object.assign(auth.counts, { tokenRequests: 0, tokensIssued: 0, unauthorized: 0 });
      Object.assign(cx.counts, { orderReads: 0, searches: 0 });
    },
  };
  return { url, username, password, control, close: () => server.close() };
}
