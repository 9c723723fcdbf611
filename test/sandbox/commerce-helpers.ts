import type { Sandbox } from '../../src/sandbox/index.js';
import { call, type JsonResponse } from './helpers.js';

export function login(sb: Sandbox, body: unknown = { username: sb.commerceUsername, password: sb.commercePassword }, path = '/rest/default/V1/integration/admin/token'): Promise<JsonResponse> {
  return call(`${sb.commerceUrl}${path}`, { method: 'POST', body });
}

export async function adminToken(sb: Sandbox): Promise<string> {
  const res = await login(sb);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.json as string;
}

export function read(sb: Sandbox, token: string | undefined, path: string, method = 'GET'): Promise<JsonResponse> {
  return call(`${sb.commerceUrl}${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

/** `searchCriteria[...]` query from groups of [field, value, condition?], plus extras. */
export function criteria(groups: Array<Array<[string, string, string?]>>, extra: Record<string, string | number> = {}): string {
  const q = new URLSearchParams();
  groups.forEach((group, g) => group.forEach(([field, value, condition], f) => {
    q.append(`searchCriteria[filter_groups][${g}][filters][${f}][field]`, field);
    q.append(`searchCriteria[filter_groups][${g}][filters][${f}][value]`, value);
    if (condition) q.append(`searchCriteria[filter_groups][${g}][filters][${f}][condition_type]`, condition);
  }));
  for (const [key, value] of Object.entries(extra)) q.append(`searchCriteria[${key}]`, String(value));
  return q.toString();
}
