/**
 * The few things the Redis stores need from a client: send one command, get its reply. Everything
 * goes through the client's generic command call (ioredis `call`, node-redis `sendCommand`), because
 * the per-command methods of the two clients take their options differently (`set(k, v, 'NX', 'PX', ms)`
 * against `set(k, v, { NX: true, PX: ms })`). No client is imported: these are structural types.
 */
import { createHash } from 'node:crypto';

/** ioredis (`new Redis()`, `new Redis.Cluster()`), or anything with the same generic command call. */
export interface CallRedisClient {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** The official `redis` client (node-redis v4 and later, `createClient()`). */
export interface SendCommandRedisClient {
  sendCommand(args: string[]): Promise<unknown>;
}

/** node-redis on a Cluster (`createCluster()`): its `sendCommand` is routed by the command's first key. */
export interface ClusterSendCommandRedisClient {
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  readonly masters: unknown;
}

/** node-redis behind Sentinel (`createSentinel()`): its `sendCommand` says whether a command only reads. */
export interface SentinelSendCommandRedisClient {
  sendCommand(isReadonly: boolean | undefined, args: string[]): Promise<unknown>;
  acquire(): unknown;
  use(fn: never): unknown;
}

/** A connected ioredis client or Cluster, or a node-redis client, cluster or Sentinel client: the stores only send commands through it. */
export type RedisClientLike = CallRedisClient | SendCommandRedisClient | ClusterSendCommandRedisClient | SentinelSendCommandRedisClient;

type Send = (args: string[]) => Promise<unknown>;

/** A Redis Cluster client, ioredis (`new Redis.Cluster()`) or node-redis (`createCluster()`). */
export function isClusterClient(client: unknown): boolean {
  return (client as { isCluster?: unknown } | undefined)?.isCluster === true || isNodeRedisCluster(client);
}

function isNodeRedisCluster(client: unknown): client is ClusterSendCommandRedisClient {
  return typeof (client as SendCommandRedisClient | undefined)?.sendCommand === 'function' && 'masters' in (client as object);
}

/** node-redis's Sentinel client: an exclusive lease (`acquire`) and `use`, which a plain client has not. */
function isNodeRedisSentinel(client: unknown): client is SentinelSendCommandRedisClient {
  const c = client as Partial<SentinelSendCommandRedisClient> | undefined;
  return typeof c?.sendCommand === 'function' && typeof c.acquire === 'function' && typeof c.use === 'function';
}

/** node-redis's legacy clients: `client.legacy()` (node-redis 5 and later), a client made with `legacyMode` (node-redis 4). */
function answersByCallback(client: unknown): boolean {
  return (client as object).constructor?.name === 'RedisLegacyClient' || (client as { options?: { legacyMode?: unknown } }).options?.legacyMode === true;
}

/** The key a command touches first: every command the stores send names it first, a script in KEYS[1]. */
function firstKeyOf(args: string[]): string | undefined {
  return args[0] === 'EVALSHA' || args[0] === 'EVAL' ? args[3] : args[1];
}

function senderOf(client: RedisClientLike): Send {
  // ioredis also has a `sendCommand`, taking its own Command objects: test for `call` first.
  if (typeof (client as CallRedisClient | undefined)?.call === 'function') {
    const c = client as CallRedisClient;
    return ([command, ...args]) => c.call(command!, ...args);
  }
  if (isNodeRedisCluster(client)) {
    return (args) => client.sendCommand(firstKeyOf(args), false, args);
  }
  // Sent as a write: the master answers (a replica could lag behind a claim or a ledger entry just written).
  if (isNodeRedisSentinel(client)) {
    return (args) => client.sendCommand(false, args);
  }
  if (typeof (client as SendCommandRedisClient | undefined)?.sendCommand === 'function') {
    if (answersByCallback(client)) {
      throw new TypeError('redisStores(client) was given a node-redis client whose commands answer by callback (client.legacy(), or createClient({ legacyMode: true }) in node-redis 4): pass the client itself (createClient({ url })), or in legacy mode its client.v4, whose commands answer with promises.');
    }
    const c = client as SendCommandRedisClient;
    return (args) => c.sendCommand(args);
  }
  throw new TypeError('redisStores(client) expects an ioredis client (new Redis(url)) or a node-redis client (createClient({ url })).');
}

/** A Lua script, run by its SHA1 (EVALSHA) and loaded with EVAL when the server does not know it yet. */
export class Script {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

/** A command or script that did not answer within `commandTimeoutMs`. */
export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms (redisStores commandTimeoutMs)`);
    this.name = 'RedisTimeoutError';
  }
}

/**
 * ioredis attaches the failed command with its arguments to its errors (`error.command.args`), and a
 * logger would print them: they may hold the admin token. Keep the command's name only.
 */
function withoutArguments(error: unknown): unknown {
  if (error && typeof error === 'object' && 'command' in error) {
    const { command } = error as { command?: { name?: unknown } };
    (error as { command?: unknown }).command = { name: command?.name };
  }
  return error;
}

/** A WRONGTYPE reply names no key: this one names the keys the command touched, and the fix. */
function namingKeys(error: unknown, keys: readonly string[]): unknown {
  if (!(error instanceof Error) || !error.message.startsWith('WRONGTYPE')) return error;
  const which = keys.length === 1 ? `The Redis key ${keys[0]} holds` : `One of the Redis keys ${keys.join(', ')} holds`;
  return new Error(`${which} another kind of value than paywidget-server keeps there (WRONGTYPE): something else writes under this prefix. Give redisStores a prefix of its own (redisStores(redis, { prefix: 'myshop:paywidget:' })), or delete the key if it is left over.`, { cause: error });
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * Commands with a deadline, so a store fails fast (and the webhook route answers 503) instead of
 * waiting on a client that queues commands while it reconnects. A command that answers after its
 * deadline is handed to `onLate`, so a claim taken too late can be given back.
 */
export class RedisCommands {
  readonly #send: Send;
  readonly #timeoutMs: number | false;

  constructor(client: RedisClientLike, timeoutMs: number | false) {
    const send = senderOf(client);
    this.#send = (args) => send(args).catch((error: unknown) => {
      throw withoutArguments(error);
    });
    this.#timeoutMs = timeoutMs;
  }

  command(args: string[], onLate?: (reply: unknown) => void): Promise<unknown> {
    const reply = this.#send(args).catch((error: unknown) => {
      throw namingKeys(error, args.slice(1, 2));
    });
    return this.#deadline(reply, onLate);
  }

  script(script: Script, keys: readonly string[], args: readonly string[], onLate?: (reply: unknown) => void): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args];
    const run = this.#send(['EVALSHA', script.sha, ...tail]).catch((error: unknown) => {
      if (isNoScript(error)) return this.#send(['EVAL', script.source, ...tail]);
      throw error;
    }).catch((error: unknown) => {
      throw namingKeys(error, keys);
    });
    return this.#deadline(run, onLate);
  }

  #deadline(reply: Promise<unknown>, onLate: ((reply: unknown) => void) | undefined): Promise<unknown> {
    const ms = this.#timeoutMs;
    if (ms === false) return reply;
    return new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        reject(new RedisTimeoutError(ms));
      }, ms);
      reply.then(
        (value) => {
          clearTimeout(timer);
          if (late) onLate?.(value);
          else resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }
}

/** A TTL for `PX` or a script: whole milliseconds, at least 1 (0 would mean no expiry). */
export const ms = (value: number): string => String(Math.max(1, Math.ceil(value)));

/** A Lua table of field/value pairs (HGETALL inside a script) as an object. */
export function pairsToObject(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!Array.isArray(reply)) return out;
  for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = String(reply[i + 1]);
  return out;
}

/** Replies may be strings or Buffers depending on the client. */
export function asString(reply: unknown): string | undefined {
  if (reply === null || reply === undefined) return undefined;
  return Buffer.isBuffer(reply) ? reply.toString('utf8') : String(reply);
}
