import { isClusterClient } from './client.js';

/**
 * Which keyspace a client and prefix write to, as one object, so that createPay can refuse one keyspace
 * to two merchants. Two clients on one server and database (a tenant built lazily with a client of its
 * own) are one keyspace too: the server is told from the client's options where it can be.
 */
const byServer = new Map<string, object>();
const byClient = new WeakMap<object, Map<string, object>>();

export function keyspaceOf(client: object, prefix: string): object {
  const server = serverOf(client);
  // ioredis puts its own keyPrefix option before every key: what counts is where the keys really start.
  const keyPrefix = (client as { options?: ClientOptions }).options?.keyPrefix;
  if (server !== undefined) return once(byServer, `${server} ${typeof keyPrefix === 'string' ? keyPrefix : ''}${prefix}`, prefix);
  let byPrefix = byClient.get(client);
  if (!byPrefix) byClient.set(client, (byPrefix = new Map()));
  return once(byPrefix, prefix, prefix);
}

function once(map: Map<string, object>, key: string, prefix: string): object {
  let keyspace = map.get(key);
  if (!keyspace) map.set(key, (keyspace = { prefix }));
  return keyspace;
}

interface ClientOptions {
  host?: unknown;
  port?: unknown;
  path?: unknown;
  db?: unknown;
  database?: unknown;
  sentinels?: unknown;
  keyPrefix?: unknown;
  socket?: { host?: unknown; port?: unknown; path?: unknown };
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * `host:port/db` (or `path/db`) from an ioredis client's or a node-redis client's options; undefined for
 * a Cluster, a Sentinel setup or anything else, which then stands for itself.
 */
function serverOf(client: object): string | undefined {
  if (isClusterClient(client)) return undefined;
  const options = (client as { options?: ClientOptions }).options;
  if (typeof options !== 'object' || options === null || (options.sentinels !== undefined && options.sentinels !== null)) return undefined;
  const socket = 'socket' in options || 'database' in options ? (options.socket ?? {}) : options; // node-redis keeps them under socket
  // ioredis keeps the database a later SELECT chose (its `condition`, once connected); node-redis keeps it to itself,
  // so for it the database in its options is all there is to go by.
  const selected = (client as { condition?: { select?: unknown } | null }).condition?.select;
  const db = typeof selected === 'number' ? selected : (options.db ?? options.database ?? 0);
  if (typeof socket.path === 'string') return `${socket.path}/${String(db)}`;
  const host = typeof socket.host === 'string' ? socket.host : 'localhost';
  return `${LOOPBACK.has(host) ? 'localhost' : host.toLowerCase()}:${String(socket.port ?? 6379)}/${String(db)}`;
}
