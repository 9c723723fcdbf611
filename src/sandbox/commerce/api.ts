import { ApiError, bearerToken, jsonBody, type Reply, type RequestContext } from '../shared/http.js';
import type { Router } from '../shared/router.js';
import type { AdminAuth } from './auth.js';
import { echo, parseCriteria } from './criteria.js';
import { MagentoError, MESSAGES } from './magento.js';
import { OrderStore } from './store.js';
import type { SandboxCommerceStats } from './types.js';

export interface CommerceContext {
  auth: AdminAuth;
  store: OrderStore;
  scopes: ReadonlySet<string>;
  lastPageAgain: boolean;
  maxPageSize: number | undefined;
  silentPageSizeCap: number | undefined;
  counts: Pick<SandboxCommerceStats, 'orderReads' | 'searches'>;
}

/** Magento's body for any refusal, the sandbox's own (415, 413, bad JSON) included. */
function guarded(handler: (ctx: RequestContext) => Reply): (ctx: RequestContext) => Reply {
  return (ctx) => {
    try {
      return handler(ctx);
    } catch (error) {
      if (error instanceof MagentoError) return error.reply();
      if (error instanceof ApiError) return new MagentoError(error.status, error.message).reply();
      throw error;
    }
  };
}

/**
 * A store code Magento does not have is no store error: its path processor leaves the segment in the
 * path (`/nostore/V1/orders`), which no route matches, before any token or input is looked at.
 */
function checkScope(cx: CommerceContext, ctx: RequestContext): void {
  const scope = ctx.params.scope;
  if (scope !== undefined && !cx.scopes.has(scope)) throw new MagentoError(404, MESSAGES.noRoute);
}

function token(cx: CommerceContext, ctx: RequestContext): Reply {
  checkScope(cx, ctx);
  return { status: 200, json: cx.auth.login(jsonBody(ctx)) };
}

function order(cx: CommerceContext, ctx: RequestContext): Reply {
  checkScope(cx, ctx);
  cx.auth.check(bearerToken(ctx));
  cx.counts.orderReads += 1;
  // As Magento's TypeProcessor reads an int parameter: anything numeric ('7.0' is order 7), else a 400 before any lookup.
  const raw = ctx.params.id!;
  if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(raw)) throw new MagentoError(400, MESSAGES.invalidType, { value: raw, type: 'int' });
  const id = Math.trunc(Number(raw));
  const found = cx.store.get(id);
  if (!found) throw OrderStore.notFound();
  return { status: 200, json: found };
}

function search(cx: CommerceContext, ctx: RequestContext): Reply {
  checkScope(cx, ctx);
  cx.auth.check(bearerToken(ctx));
  cx.counts.searches += 1;
  const criteria = parseCriteria(ctx.url.searchParams);
  const pageSize = criteria.pageSize !== undefined && cx.silentPageSizeCap !== undefined ? Math.min(criteria.pageSize, cx.silentPageSizeCap) : criteria.pageSize;
  if (cx.maxPageSize !== undefined && pageSize !== undefined && pageSize > cx.maxPageSize) {
    throw new MagentoError(400, MESSAGES.pageSizeCap, { max: cx.maxPageSize });
  }
  const ids = cx.store.search(criteria);
  let page: number[];
  if (pageSize !== undefined && pageSize > 0) {
    let current = Math.max(1, criteria.currentPage ?? 1);
    const pages = Math.ceil(ids.length / pageSize);
    if (cx.lastPageAgain && pages > 0 && current > pages) current = pages;
    page = ids.slice((current - 1) * pageSize, current * pageSize);
  } else {
    page = ids.slice(0, ids.length); // no page size: Magento answers every match
  }
  return { status: 200, json: { items: page.map((id) => cx.store.get(id)), search_criteria: echo(criteria), total_count: ids.length } };
}

/** The Order Retrieval API, with and without the scope segment; reads on GET and (as the document writes them) POST. */
export function addCommerceRoutes(router: Router, cx: CommerceContext): void {
  for (const prefix of ['/rest/:scope/V1', '/rest/V1']) {
    router.add('POST', `${prefix}/integration/admin/token`, guarded((ctx) => token(cx, ctx)));
    for (const method of ['GET', 'POST']) {
      router.add(method, `${prefix}/orders/:id`, guarded((ctx) => order(cx, ctx)));
      router.add(method, `${prefix}/orders`, guarded((ctx) => search(cx, ctx)));
    }
  }
}

export function noRoute(status: number, _code: string, message: string, headers?: Record<string, string>): Reply {
  return { ...new MagentoError(status, status === 404 ? MESSAGES.noRoute : message).reply(), ...(headers ? { headers } : {}) };
}
