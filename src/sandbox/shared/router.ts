import type { Reply, RequestContext } from './http.js';

export type Handler = (ctx: RequestContext) => Reply | Promise<Reply>;

/** Path segments of a pattern; `:name`, `{name}` and `*` match any one non-empty segment. */
export type PathPattern = readonly string[];

export function compilePath(pattern: string): PathPattern {
  if (!pattern.startsWith('/')) throw new TypeError(`path pattern must start with "/": ${pattern}`);
  return pattern.split('/').slice(1);
}

/** The name of a parameter or wildcard segment (`:id`, `{id}`, `*`); undefined for a literal one. */
export function paramName(segment: string): string | undefined {
  if (segment === '*') return '*';
  if (segment.startsWith(':')) return segment.slice(1);
  if (segment.startsWith('{') && segment.endsWith('}')) return segment.slice(1, -1);
  return undefined;
}

/** The parameters of `path` when it matches `pattern`, otherwise undefined. */
export function matchPath(pattern: PathPattern, path: string): Record<string, string> | undefined {
  const segments = path.split('/').slice(1);
  if (segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    const actual = segments[i]!;
    const name = paramName(expected);
    if (name === undefined) {
      if (expected !== actual) return undefined;
    } else {
      if (actual === '') return undefined;
      try {
        params[name] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    }
  }
  return params;
}

interface Route {
  method: string;
  pattern: PathPattern;
  handler: Handler;
}

/** Whether some path matches both patterns: as long, and each pair of segments equal where both are literal. */
function overlap(a: PathPattern, b: PathPattern): boolean {
  return a.length === b.length && a.every((segment, i) => segment === b[i] || paramName(segment) !== undefined || paramName(b[i]!) !== undefined);
}

export type RouteMatch =
  | { kind: 'found'; handler: Handler; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method: method.toUpperCase(), pattern: compilePath(pattern), handler });
    return this;
  }

  /**
   * Whether a request matching `method` (any, when undefined) and `pattern` (any path, when undefined) could reach
   * a route. A preflight (OPTIONS) or a HEAD reaches a path whatever methods it serves.
   */
  reaches(method: string | undefined, pattern: PathPattern | undefined): boolean {
    const anyMethod = method === undefined || method === 'OPTIONS' || method === 'HEAD';
    return this.routes.some((route) => (anyMethod || route.method === method) && (pattern === undefined || overlap(route.pattern, pattern)));
  }

  /** Every route whose path begins with `prefix`, as "METHOD /pattern". */
  list(prefix: string): string[] {
    return this.routes.filter((route) => `/${route.pattern.join('/')}`.startsWith(prefix)).map((route) => `${route.method} /${route.pattern.join('/')}`);
  }

  match(method: string, path: string): RouteMatch {
    const allow: string[] = [];
    for (const route of this.routes) {
      const params = matchPath(route.pattern, path);
      if (!params) continue;
      if (route.method === method) return { kind: 'found', handler: route.handler, params };
      allow.push(route.method);
    }
    return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' };
  }
}
