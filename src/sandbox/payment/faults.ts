import { randomBytes } from 'node:crypto';
import { compilePath, matchPath, paramName, type PathPattern, type Router } from '../shared/router.js';
import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type { SandboxServer } from '../shared/server.js';
import type { ActiveFault, FaultInjector, FaultRule } from './types.js';

interface StoredFault {
  id: string;
  rule: FaultRule;
  method: string | undefined;
  path: PathPattern | undefined;
  remaining: number;
  hits: number;
}

const RULE_KEYS = new Set(['route', 'times', 'rate', 'status', 'body', 'headers', 'latencyMs', 'hang', 'malformed']);

/** Checks a rule and copies it; throws TypeError naming the first bad field. */
export function validateFaultRule(input: unknown): FaultRule {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new TypeError('a fault rule must be an object');
  const rule = input as Record<string, unknown>;
  for (const key of Object.keys(rule)) if (!RULE_KEYS.has(key)) throw new TypeError(`unknown fault rule field: ${key}`);
  const check = (ok: boolean, message: string) => {
    if (!ok) throw new TypeError(message);
  };
  const { route, times, rate, status, body, headers, latencyMs, hang, malformed } = rule;
  check(route === undefined || (typeof route === 'string' && route.trim() !== ''), 'route must be a non-empty string');
  check(times === undefined || times === Infinity || (Number.isSafeInteger(times) && (times as number) > 0), 'times must be a positive integer or Infinity');
  check(rate === undefined || (typeof rate === 'number' && rate >= 0 && rate <= 1), 'rate must be a number from 0 to 1');
  // A 1xx is no final answer: the client would wait for one until its time-out.
  check(status === undefined || (Number.isInteger(status) && (status as number) >= 200 && (status as number) <= 599), 'status must be a final HTTP status (200-599)');
  check(body === undefined || typeof body === 'string', 'body must be a string');
  check(
    headers === undefined ||
      (typeof headers === 'object' && headers !== null && !Array.isArray(headers) && Object.values(headers).every((v) => typeof v === 'string')),
    'headers must be an object of strings',
  );
  check(latencyMs === undefined || (typeof latencyMs === 'number' && Number.isFinite(latencyMs) && latencyMs >= 0), 'latencyMs must be a non-negative number');
  check(hang === undefined || typeof hang === 'boolean', 'hang must be a boolean');
  check(malformed === undefined || typeof malformed === 'boolean', 'malformed must be a boolean');
  // Headers alone would be dropped, the request served as usual: a test meaning a 429 with Retry-After would get a 201.
  // (A rule with no answer, latency or hang at all is a counter: its hits count the requests it matched.)
  check(headers === undefined || hasAnswer(rule as FaultRule), 'headers go with an answer: give the rule a status or a body too');
  // Refused now, not answered later as a 500 from writeHead that a client retrying 5xx might pass for the fault.
  for (const [name, value] of Object.entries((headers as Record<string, string> | undefined) ?? {})) {
    try {
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      throw new TypeError(`headers must be ones an HTTP answer can carry: ${JSON.stringify(name)}: ${JSON.stringify(value)} is not (a name is a token, without spaces; a value has no line breaks)`);
    }
  }
  const copy: FaultRule = { ...(rule as FaultRule) };
  if (headers) copy.headers = { ...(headers as Record<string, string>) };
  return copy;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * "METHOD /path", "/path" or "METHOD". A rule that could never match (a typo in the method or the path, a
 * path outside this service's prefix, a method its path is not served with) is refused: it would let a
 * resilience test pass without any fault injected.
 */
function parseRoute(route: string | undefined, prefix: string, router: Router): { method: string | undefined; path: PathPattern | undefined } {
  if (route === undefined) return { method: undefined, path: undefined };
  const refuse = (problem: string) => new TypeError(`route ${JSON.stringify(route)} ${problem}; write "METHOD ${prefix}…", "${prefix}…" or "METHOD"`);
  const parts = route.trim().split(/\s+/);
  if (parts.length > 2) throw refuse('has more than a method and a path');
  const [methodPart, pathPart] = parts.length === 2 || !parts[0]!.startsWith('/') ? parts : [undefined, parts[0]];
  const method = methodPart === undefined || methodPart === '*' ? undefined : methodPart.toUpperCase();
  if (method !== undefined && !METHODS.has(method)) throw refuse(`names no HTTP method (${methodPart})`);
  if (pathPart === undefined) {
    if (!router.reaches(method, undefined)) throw refuse(`names a method none of this service's routes takes (${router.list(prefix).join(', ')})`);
    return { method, path: undefined };
  }
  const path = compilePath(pathPart);
  // The first segment may be a parameter or a wildcard (it then matches the prefix too), else it must be the prefix's.
  if (paramName(path[0]!) === undefined && `/${path[0]}/` !== prefix) throw refuse(`is outside this service's paths, which begin with ${prefix}`);
  if (!router.reaches(method, path)) throw refuse(`matches none of this service's routes (${router.list(prefix).join(', ')}); check its spelling, method and trailing slash`);
  return { method, path };
}

/** Fault rules, first match wins; `take` consumes one use of the matching rule. */
export class FaultSet implements FaultInjector {
  private faults: StoredFault[] = [];

  constructor(
    /** The service's routes, which a rule must be able to reach. */
    private readonly router: Router,
    /** Only paths under this prefix are eligible (`/api/` for the payment service, `/rest/` for the commerce platform). */
    private readonly prefix = '/api/',
    private readonly random: () => number = Math.random,
  ) {}

  inject(input: FaultRule): string {
    const rule = validateFaultRule(input);
    const { method, path } = parseRoute(rule.route, this.prefix, this.router);
    const id = `flt_${randomBytes(6).toString('hex')}`;
    this.faults.push({ id, rule, method, path, remaining: rule.times ?? 1, hits: 0 });
    return id;
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.id !== id);
    return this.faults.length !== before;
  }

  clear(): void {
    this.faults = [];
  }

  list(): ActiveFault[] {
    return this.faults.map((f) => ({ id: f.id, rule: { ...f.rule }, remaining: f.remaining, hits: f.hits }));
  }

  /** The rule to apply to this request, if any (only paths under the prefix are eligible). */
  take(method: string, path: string): FaultRule | undefined {
    if (!path.startsWith(this.prefix)) return undefined;
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.method !== undefined && fault.method !== method) continue;
      if (fault.path !== undefined && !matchPath(fault.path, path)) continue;
      if ((fault.rule.rate ?? 1) <= this.random()) continue;
      fault.remaining -= 1;
      fault.hits += 1;
      if (fault.remaining <= 0) this.faults = this.faults.filter((f) => f !== fault);
      // A counter only counts: the rules after it still apply (a suite that counts requests and injects an outage).
      if (!isCounter(fault.rule)) return fault.rule;
    }
    return undefined;
  }
}

/** Whether the rule answers the request itself (a status, a body, or malformed JSON). */
function hasAnswer(rule: FaultRule): boolean {
  return rule.malformed === true || rule.status !== undefined || rule.body !== undefined;
}

/** A rule with no answer, latency or hang: it counts the requests it matches, and changes nothing. */
function isCounter(rule: FaultRule): boolean {
  return !hasAnswer(rule) && !rule.latencyMs && rule.hang !== true;
}

const DEFAULT_MALFORMED_BODY = '{"widget_token": "wt_';

function guessContentType(body: string): string {
  if (body.trimStart().startsWith('<')) return 'text/html; charset=utf-8';
  try {
    JSON.parse(body);
    return 'application/json; charset=utf-8';
  } catch {
    return 'text/plain; charset=utf-8';
  }
}

/** An injected answer for `rule`, or undefined when the rule only adds latency (then the request is served normally). */
export function faultResponse(rule: FaultRule): { status: number; headers: Record<string, string>; body: string } | undefined {
  const custom = rule.headers ?? {};
  const hasType = Object.keys(custom).some((name) => name.toLowerCase() === 'content-type');
  if (rule.malformed) {
    return { status: rule.status ?? 200, headers: { ...(hasType ? {} : { 'content-type': 'application/json; charset=utf-8' }), ...custom }, body: rule.body ?? DEFAULT_MALFORMED_BODY };
  }
  if (!hasAnswer(rule)) return undefined;
  const status = rule.status ?? 500;
  const body = rule.body ?? JSON.stringify({ error: { code: 'injected_fault', message: `Fault injected by the sandbox (HTTP ${status}).` } });
  return { status, headers: { ...(hasType ? {} : { 'content-type': guessContentType(body) }), ...custom }, body };
}

type Answer = ReturnType<typeof faultResponse>;

/**
 * The fault step both fake services run before routing: take the matching rule, wait its latency,
 * hang, or answer for the handler. True when the request was dealt with here.
 */
export async function serveFault(server: SandboxServer, faults: FaultSet, method: string, path: string, res: ServerResponse, respond: (rule: FaultRule) => Answer = faultResponse): Promise<boolean> {
  const rule = faults.take(method, path);
  if (!rule) return false;
  if (rule.latencyMs) await server.wait(rule.latencyMs);
  if (server.closed || rule.hang) return true; // a hanging request is dropped by close()
  const answer = respond(rule);
  if (!answer) return false;
  if (!res.headersSent && !res.destroyed) res.writeHead(answer.status, answer.headers).end(answer.body);
  return true;
}
