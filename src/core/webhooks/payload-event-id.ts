/** The payload's `id` field when it is a non-empty string or a whole number (a service with numeric ids). */
export function defaultPayloadEventId(payload: unknown): string | undefined {
  const id = typeof payload === 'object' && payload !== null ? (payload as { id?: unknown }).id : undefined;
  if (typeof id === 'string') return id === '' ? undefined : id;
  return typeof id === 'number' && Number.isSafeInteger(id) ? String(id) : undefined;
}
