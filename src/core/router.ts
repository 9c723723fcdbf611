import { controlFlowIn } from './control-flow.js';
import { invalidInput, PayError, toPayError, wasLogged } from './errors.js';
import type { Logger, PayRequest, PayResponse } from './types.js';
import { utf8Length } from './utf8-length.js';
import { cutText } from './well-formed.js';

export type RouteParams = Record<string, string>;
export type RouteHandler = (request: PayRequest, params: RouteParams) => Promise<PayResponse>;

export interface Route {
  method: 'GET' | 'POST';
  /** Segments relative to the mount path; `:name` captures one segment. */
  path: string;
  /** The largest body the route takes (413 past it): adapters read no further, and refuse a longer declared length at once. */
  maxBodyBytes: number;
  handler: RouteHandler;
}

interface CompiledRoute extends Route {
  segments: string[];
}

export interface Router {
  /** Method and path of every route, for frameworks that register routes one by one (Koa). */
  readonly routes: ReadonlyArray<Pick<Route, 'method' | 'path'>>;
  /** Cheap check adapters make before anything else: is this one of our paths (whatever the method)? */
  matches(method: string, path: string): boolean;
  /** Whether a route runs for this method at this path (HEAD with GET's): only then is a body read. */
  hasRoute(method: string, path: string): boolean;
  /** The body limit of the route that runs for this method at this path; undefined when none does (no body is read). */
  bodyLimit(method: string, path: string): number | undefined;
  /** The methods one of our paths answers (HEAD with GET); empty when the path is not ours. */
  allowedMethods(path: string): string[];
  /** The core contract: a plain request in, a plain response out, or null when the path is not ours. */
  handle(request: PayRequest): Promise<PayResponse | null>;
}

export function createRouter(routes: Route[], logger: Logger): Router {
  const compiled: CompiledRoute[] = routes.map((route) => ({ ...route, segments: split(route.path)! }));
  // The hot routes (webhooks, widget-token) have no params: found by method, then path, without splitting
  // the path or building a key.
  // Their answer is built once: a request to one of them allocates none (hasRoute and handle both ask).
  const NO_PARAMS: RouteParams = Object.freeze({});
  const NOT_ALLOWED: string[] = Object.freeze([]) as unknown as string[];
  const exact = new Map<string, Map<string, { route: CompiledRoute; params: RouteParams; allowed: string[] }>>();
  for (const route of compiled.filter((r) => !r.path.includes(':'))) {
    const byPath = exact.get(route.method) ?? new Map();
    exact.set(route.method, byPath.set(route.path, { route, params: NO_PARAMS, allowed: NOT_ALLOWED }));
  }

  /** HEAD is answered as GET without a body. With no route for the method, `allowed` lists the methods the path has (for 405). */
  const findForMethod = (method: string, path: string) => {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const direct = exact.get(wanted)?.get(path);
    if (direct) return direct;
    const segments = split(path);
    const allowed: string[] = [];
    if (segments === undefined) return { route: undefined, params: undefined, allowed };
    for (const route of compiled) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      if (route.method === wanted) return { route, params, allowed };
      allowed.push(route.method);
    }
    return { route: undefined, params: undefined, allowed };
  };

  const isKnown = (method: string, path: string) => {
    const found = findForMethod(method.toUpperCase(), path);
    return found.route !== undefined || found.allowed.length > 0;
  };

  return {
    routes: routes.map(({ method, path }) => ({ method, path })),
    // OPTIONS is left to the app (its CORS handling, say): the library has no preflight of its own.
    matches: (method, path) => method.toUpperCase() !== 'OPTIONS' && isKnown(method, path),
    hasRoute: (method, path) => findForMethod(method.toUpperCase(), path).route !== undefined,
    bodyLimit: (method, path) => findForMethod(method.toUpperCase(), path).route?.maxBodyBytes,
    // No route answers OPTIONS, so every route of the path lands in `allowed`.
    allowedMethods: (path) => withHead(findForMethod('OPTIONS', path).allowed),
    async handle(request) {
      const method = request.method.toUpperCase();
      if (method === 'OPTIONS') return null;
      const { route, params, allowed } = findForMethod(method, request.path);
      if (!route) {
        if (allowed.length === 0) return null;
        // HEAD is served wherever GET is, so Allow names it too (as the answer to OPTIONS does).
        const methods = withHead(allowed);
        const response = new PayError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${request.path}; use ${methods.join(' or ')}.`).toResponse();
        response.headers.allow = methods.join(', ');
        return method === 'HEAD' ? headResponse(response) : response;
      }
      let response: PayResponse;
      try {
        response = malformedSegment(request, params) ?? await route.handler(request, params);
      } catch (error) {
        // A hook's redirect() or notFound(): Next answers it, not an error here.
        const flow = controlFlowIn(error, request.framework);
        if (flow !== undefined) throw flow;
        const payError = toPayError(error);
        // A 5xx is the server's side failing (configuration, a hook, an upstream): whoever runs it needs the details,
        // once: a store failure was logged where it arose, with the payment or event id.
        if (payError.status >= 500 && !wasLogged(error)) logger.error({ err: error, code: payError.code, route: route.path }, 'route handler failed');
        response = payError.toResponse();
      }
      return method === 'HEAD' ? headResponse(response) : response;
    },
  };
}

function withHead(methods: string[]): string[] {
  return methods.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method]));
}

/** GET's answer without its body, but with the length it would have had (a HEAD answer must not claim 0). */
function headResponse(response: PayResponse): PayResponse {
  const length = typeof response.body === 'string' ? utf8Length(response.body) : response.body.byteLength;
  return { ...response, headers: { ...response.headers, 'content-length': String(length) }, body: '' };
}

/**
 * The answer to OPTIONS on one of our paths that no middleware of the app answered first (its CORS
 * handling would have): 204 with Allow, the path's methods and OPTIONS. Null on another path.
 */
export function optionsAnswer(router: Pick<Router, 'allowedMethods'>, path: string): PayResponse | null {
  const allowed = router.allowedMethods(path);
  return allowed.length === 0 ? null : { status: 204, headers: { allow: [...allowed, 'OPTIONS'].join(', ') }, body: '' };
}

/**
 * The answer for a path under the mount point that is no route of ours (Next owns the whole catch-all):
 * `hint` says what to fix, else the routes there are listed.
 */
export function routeNotFound(path: string, routes: Router['routes'], hint?: string): PayResponse {
  const fix = hint ?? ` Its routes, below the folder of the catch-all: ${routes.map((route) => `${route.method} ${route.path}`).join(', ')}.`;
  return new PayError('NOT_FOUND', `No paywidget-server route at ${path}.${fix}`).toResponse();
}

/**
 * A path's segments, a trailing slash left out ('/webhooks/' is '/webhooks'); undefined for an empty segment
 * anywhere else: '/payments//reconcile' would otherwise be '/payments/reconcile', payment id 'reconcile'.
 */
function split(path: string): string[] | undefined {
  const q = path.indexOf('?');
  const segments = (q === -1 ? path : path.slice(0, q)).split('/');
  if (segments[0] === '') segments.shift();
  if (segments.at(-1) === '') segments.pop();
  return segments.includes('') ? undefined : segments;
}

function matchSegments(pattern: string[], actual: string[]): RouteParams | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: RouteParams = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i] as string;
    const a = actual[i] as string;
    if (p.startsWith(':')) {
      try {
        params[p.slice(1)] = decodeURIComponent(a);
      } catch {
        // Still this route's path (a 400 from it, not a 404 or the app's next()), but no value to hand over.
        params[p.slice(1)] = a;
        MALFORMED.set(params, { name: p.slice(1), segment: a });
      }
    } else if (p !== a) return undefined;
  }
  return params;
}

/** Params whose segment is not valid percent-encoding (`%ZZ`, a cut UTF-8 sequence): taken as it is, it would name another id. */
const MALFORMED = new WeakMap<RouteParams, { name: string; segment: string }>();

function malformedSegment(request: PayRequest, params: RouteParams): PayResponse | undefined {
  const malformed = MALFORMED.get(params);
  if (!malformed) return undefined;
  const shown = cutText(malformed.segment, 60);
  return invalidInput(malformed.name, `The path segment for ${malformed.name} in ${request.method} ${request.path.slice(0, 200)} is not valid percent-encoding (${JSON.stringify(shown)}): encode it with encodeURIComponent.`).toResponse();
}
