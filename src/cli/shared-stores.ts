import { join } from 'node:path';
import { PayError } from '../core/errors.js';
import type { StoreOptions } from '../core/stores/index.js';
import { LoginRefusalFile, stateDirectory } from './login-refusal-file.js';

/**
 * The stores a CLI run shares with the merchant's servers: in Redis when REDIS_URL is set (the ledger
 * they record webhooks and polls in, the commerce admin token), otherwise in memory, empty, for this
 * run only, except refused admin logins, kept in a file across runs (see LoginRefusalFile).
 * ioredis is an optional peer dependency, loaded only then. `warn` hears of a refusal file it cannot read or write.
 */
export async function sharedStores(env: Record<string, string | undefined>, warn: (message: string) => void = () => {}): Promise<{ stores: StoreOptions | undefined; close(): Promise<void> }> {
  // As the library reads its variables: an empty one is unset, and a value copied with a newline keeps none.
  const url = env.REDIS_URL?.trim();
  if (!url) {
    const directory = stateDirectory(env);
    // Without a state directory (no HOME: a cron job or a service user) a refusal cannot be kept, which it says.
    return { stores: { adminTokens: new LoginRefusalFile(directory === undefined ? undefined : join(directory, 'login-refusals.json'), warn) }, close: async () => {} };
  }
  const address = redisAddress(url);
  const [{ Redis, Cluster }, { redisStores }] = await Promise.all([importIoredis(), import('../stores/redis/index.js')]);
  // disconnectTimeout 0: after a failed connect, ioredis would wait 2 s for a close the socket already had.
  const options = { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true, disconnectTimeout: 0 };
  let client: InstanceType<typeof Redis> | InstanceType<typeof Cluster> = new Redis(url, options);
  await connected(client, address);
  // A node of a Cluster answers the keys of its own slots only (MOVED for the others): the servers' ledger is then
  // read through the Cluster, whichever of its nodes REDIS_URL names.
  if (!url.startsWith('/') && await isClusterNode(client)) {
    client.disconnect();
    client = new Cluster([url], { enableOfflineQueue: false, lazyConnect: true, clusterRetryStrategy: () => null, redisOptions: { ...clusterCredentials(url), ...options } });
    await connected(client, address);
  }
  return {
    // An empty prefix would read and write keys nobody else uses (an empty ledger, reported without a word).
    stores: redisStores(client, { prefix: env.PAYWIDGET_REDIS_PREFIX?.trim() || undefined }),
    // quit() waits for replies a lost connection will never send: then the connection is just dropped.
    close: async () => void (await client.quit().catch(() => client.disconnect())),
  };
}

/** Connects, or STORE_UNAVAILABLE naming the address (without credentials) and why. */
async function connected(client: import('ioredis').Redis | import('ioredis').Cluster, address: string): Promise<void> {
  // Failures reach the command through its rejected calls; unheard, each reconnect attempt would print.
  // The last one is kept: a failed connect only says "Connection is closed", not why (WRONGPASS, ECONNREFUSED).
  let lastError: Error | undefined;
  client.on('error', (error: Error) => void (lastError = error));
  try {
    await client.connect();
  } catch (error) {
    // Else ioredis keeps reconnecting, and the process never exits.
    client.disconnect();
    throw new PayError('STORE_UNAVAILABLE', `Could not connect to Redis at ${address} (REDIS_URL): ${(lastError ?? (error as Error)).message}. Check that Redis runs there, or unset REDIS_URL to use stores in memory, empty, for this run only.`, { cause: error });
  }
}

/** Whether the server is a node of a Redis Cluster; not when it will not say (an ACL without INFO). */
async function isClusterNode(client: import('ioredis').Redis): Promise<boolean> {
  const info = await client.info('cluster').catch(() => '');
  return /^cluster_enabled:1\s*$/m.test(info);
}

/**
 * What the Cluster's other nodes need from REDIS_URL: its user, password and TLS. The node it names is given as the URL
 * itself; the nodes the Cluster finds from there are reached with these.
 */
function clusterCredentials(url: string): { username?: string; password?: string; tls?: object } {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** ioredis, an optional peer dependency: its absence is a setup step to name, not an unexpected error. */
async function importIoredis(): Promise<{ Redis: typeof import('ioredis').Redis; Cluster: typeof import('ioredis').Cluster }> {
  try {
    return await import('ioredis');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new PayError('CONFIG_MISSING', 'REDIS_URL is set, so the command shares its stores through Redis, with the ioredis client, which is not installed: npm install ioredis, or unset REDIS_URL to use stores in memory, empty, for this run only.', { cause: error });
  }
}

/**
 * Where REDIS_URL points, without its credentials; CONFIG_INVALID for anything but a redis:// or rediss://
 * URL with a host, or a socket path. ioredis reads any other string as a socket path, and its error quotes it,
 * password included.
 */
function redisAddress(url: string): string {
  // A socket path's query may carry the password (ioredis reads /tmp/redis.sock?password=…): the path alone is shown.
  if (url.startsWith('/') && !url.startsWith('//')) return url.split('?')[0]!;
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // named below, without the value
  }
  if (parsed && (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') && parsed.host !== '') {
    // ioredis decodes them and throws 'URI malformed' on a stray %, outside any error it names.
    if (!decodes(parsed.username) || !decodes(parsed.password)) {
      throw new PayError('CONFIG_INVALID', 'REDIS_URL holds a user name or password that is not valid percent-encoding: write each special character of it percent-encoded (% as %25, @ as %40, : as %3A).', { details: { options: ['REDIS_URL'] } });
    }
    // ioredis would send SELECT NaN, and its ReplyError end the command with a stack trace.
    if (!/^\/?(\d+)?\/?$/.test(parsed.pathname)) {
      throw new PayError('CONFIG_INVALID', 'REDIS_URL names its database by number after the host (redis://host:6379/0); its path holds something else.', { details: { options: ['REDIS_URL'] } });
    }
    return `${parsed.protocol}//${parsed.host}`;
  }
  // '//:password@host' is a URL to ioredis, without its scheme: asked for in full rather than guessed at.
  const got = url.startsWith('//') ? 'a URL without its scheme' : parsed ? `a ${parsed.protocol}// URL${parsed.host === '' ? ' without a host' : ''}` : 'no URL';
  throw new PayError('CONFIG_INVALID', `REDIS_URL must be redis://[user:password@]host[:port][/db], rediss://… for TLS, or the path of a Unix socket; it holds ${got}.`, { details: { options: ['REDIS_URL'] } });
}

function decodes(component: string): boolean {
  try {
    decodeURIComponent(component);
    return true;
  } catch {
    return false;
  }
}
