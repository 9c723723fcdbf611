import type { Pay } from '../../core/pay.js';
import { optionsAnswer, routeNotFound } from '../../core/router.js';
import type { PayResponse } from '../../core/types.js';

/**
 * The path below the mount point from a catch-all segment (`[...path]`): ['payments', 'p1'] → '/payments/p1'.
 * Next hands the segments over decoded and the core router decodes path params, so each is encoded again
 * (else `a%2541` would reach a route as `aA`, and a decoded `/` would split a segment in two).
 */
export function catchAllPath(segments: string | string[] | undefined): string {
  const list = Array.isArray(segments) ? segments : segments === undefined ? [] : [segments];
  return '/' + list.map(encodeURIComponent).join('/');
}

/** Where the catch-all segment is found, for the hint when it is not: the option and the factory that takes it. */
export interface CatchAll {
  param: string;
  factory: 'createRouteHandlers' | 'createPagesHandler';
}

/**
 * The answer for a request that is none of the library's routes, since Next owns the whole catch-all:
 * OPTIONS on one of its paths answers 204 with Allow (an app that answers CORS preflights handles
 * OPTIONS before this), anything else a JSON 404. A catch-all that held no segment is a route folder
 * named otherwise (`[...slug]`): the 404 says which option to pass.
 */
export function notARoute(pay: Pay, method: string, segments: string | string[] | undefined, { param, factory }: CatchAll): PayResponse {
  const path = catchAllPath(segments);
  const options = method.toUpperCase() === 'OPTIONS' ? optionsAnswer(pay, path) : null;
  if (options) return options;
  if (segments !== undefined) return routeNotFound(path);
  return routeNotFound(path, ` The catch-all segment '${param}' holds nothing: if the route's folder is named otherwise ([...slug]), pass its name, ${factory}(pay, { param: 'slug' }).`);
}
