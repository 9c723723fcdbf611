import { PayError } from '../../core/errors.js';
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
 * OPTIONS before this), anything else a JSON 404. Absent with no other segment, the request was for the
 * mount path itself (`[[...path]]`). When the segment named `param` is absent (or a plain dynamic segment)
 * but another catch-all segment holds the path, the route folder is named otherwise (`[...slug]`): no request
 * could reach a route, so CONFIG_INVALID is thrown, for Next to log the fix and answer 500 (a webhook sender
 * retries a 500, where a 404 may make it drop the event).
 */
export function notARoute(pay: Pay, method: string, params: Readonly<Record<string, unknown>>, { param, factory }: CatchAll): PayResponse {
  const segments = params[param] as string | string[] | undefined;
  const path = catchAllPath(segments);
  const options = method.toUpperCase() === 'OPTIONS' ? optionsAnswer(pay, path) : null;
  if (options) return options;
  // A catch-all's segments come as an array (a query string's repeated key too, which is rare enough here); a
  // string under `param` is a plain dynamic segment of the same name higher up (`[path]/pay/[...rest]`).
  const other = Array.isArray(segments) ? undefined : Object.keys(params).find((key) => key !== param && Array.isArray(params[key]));
  if (other === undefined) return routeNotFound(path, pay.routes);
  throw new PayError('CONFIG_INVALID', `paywidget-server: the catch-all segment of this route is named '${other}', not '${param}', so ${factory} finds no path in it and no route of the library can be reached. Pass its name: ${factory}(pay, { param: ${JSON.stringify(other)} }).`);
}
