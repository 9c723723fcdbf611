/**
 * A real redis-server for the tests and the benchmark: started on a free 127.0.0.1 port with no
 * persistence (`--save '' --appendonly no`) unless asked for AOF, stopped after. `useRedisUrl()`
 * answers REDIS_URL when it is set, so CI can point the tests at a Redis of its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from './free-port.js';

export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';

export interface RedisServerOptions {
  /** Append-only file with fsync on every write, in `dir`: what was acknowledged survives a kill. */
  appendOnly?: boolean;
  /** Working directory (the AOF lives there); a fresh temporary one by default. */
  dir?: string;
  /** Cluster mode, one node holding every slot (connect with `new Redis.Cluster([{ host, port }])`); `'empty'`: holding none yet. */
  cluster?: boolean | 'empty';
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** SIGKILL: the server stops at once, as in a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory (after kill or stop). */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  stop(): Promise<void>;
}

/** Spawns redis-server and resolves once it accepts connections; rejects with its output when it exits first. */
function launch(port: number, dir: string, appendOnly: boolean, cluster = false): Promise<ChildProcess> {
  const args = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    ...(appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(cluster ? ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-announce-ip', '127.0.0.1'] : []),
  ];
  return spawnUntil(args, 'Ready to accept connections');
}

/** Spawns redis-server with `args` and resolves once its output says `ready`; rejects with its output when it exits first. */
function spawnUntil(args: string[], ready: string): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(ready)) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error) => reject(new Error(`could not start ${REDIS_SERVER}: ${error.message}. Install it (apt-get install redis-server) or set REDIS_URL.`)));
    child.once('exit', (code) => reject(new Error(`redis-server ${args.join(' ')} exited with ${code} before it was ready:\n${output}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'paywidget-redis-'));
  const appendOnly = options.appendOnly ?? false;
  let port = 0;
  let child: ChildProcess | undefined;
  for (let attempt = 0; !child; attempt++) {
    port = await freePort();
    try {
      child = await launch(port, dir, appendOnly, options.cluster !== undefined && options.cluster !== false);
    } catch (error) {
      // Another process may have taken the port between the probe and the start.
      if (attempt >= 4 || !String(error).includes('Address already in use')) throw error;
    }
  }
  if (options.cluster === true) await takeAllSlots(port);
  const kill = async () => {
    if (!child) return;
    const running = child;
    child = undefined;
    running.kill('SIGKILL');
    await exited(running);
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    kill,
    async restart() {
      await kill();
      for (let attempt = 0; ; attempt++) {
        try {
          child = await launch(port, dir, appendOnly);
          return;
        } catch (error) {
          if (attempt >= 20) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
    async stop() {
      await kill();
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Sentinel watching `master` under the name 'mymaster', on a free port; `stop()` ends it. */
export async function startSentinel(master: RedisServer): Promise<{ port: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'paywidget-sentinel-'));
  const port = await freePort();
  // Sentinel rewrites its configuration file, so it is one of its own.
  const config = join(dir, 'sentinel.conf');
  writeFileSync(config, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor mymaster 127.0.0.1 ${master.port} 1\n`);
  const child = await spawnUntil([config, '--sentinel'], '+monitor master mymaster');
  return {
    port,
    async stop() {
      child.kill('SIGKILL');
      await exited(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A Cluster of two nodes, each holding half the slots: a key of the other half is answered MOVED, as in a real
 * Cluster. The library's default prefix, `{paywidget}:`, hashes to slot 13684, on `nodes[1]`.
 */
export async function startRedisCluster(): Promise<{ nodes: [RedisServer, RedisServer]; stop(): Promise<void> }> {
  const nodes = await Promise.all([startRedisServer({ cluster: 'empty' }), startRedisServer({ cluster: 'empty' })]) as [RedisServer, RedisServer];
  const [a, b] = nodes.map((node) => new Redis(node.port, '127.0.0.1')) as [Redis, Redis];
  try {
    await a.call('CLUSTER', 'ADDSLOTSRANGE', '0', '8191');
    await b.call('CLUSTER', 'ADDSLOTSRANGE', '8192', '16383');
    await a.call('CLUSTER', 'MEET', '127.0.0.1', String(nodes[1].port));
    for (const node of [a, b]) {
      while (!String(await node.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    a.disconnect();
    b.disconnect();
  }
  return { nodes, stop: async () => void (await Promise.all(nodes.map((node) => node.stop()))) };
}

/** Makes a fresh cluster node hold every slot, and waits until it says the cluster is ok. */
async function takeAllSlots(port: number): Promise<void> {
  const node = new Redis(port, '127.0.0.1');
  try {
    await node.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    while (!String(await node.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    node.disconnect();
  }
}

/** The client options the library recommends: commands fail at once while the connection is down. */
export const FAIL_FAST: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 0 };

/** An ioredis client that is connected (ready) when it resolves. */
export async function connectedRedis(url: string, options: RedisOptions = FAIL_FAST): Promise<Redis> {
  const client = new Redis(url, { ...options, lazyConnect: true });
  await client.connect();
  return client;
}

/**
 * REDIS_URL when it is set, else a redis-server started for the caller. `done()` stops what was started.
 */
export async function useRedisUrl(): Promise<{ url: string; done: () => Promise<void> }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, done: async () => {} };
  const server = await startRedisServer();
  return { url: server.url, done: () => server.stop() };
}

/** Deletes every key under `prefix` (tests share a Redis when REDIS_URL is set, each under its own prefix). */
export async function deletePrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/**
 * Moves the clock of every key under `prefix` forward by `ms`: each TTL shrinks by `ms`, and keys whose
 * TTL runs out are deleted. Lets the claim contract "wait" for leases and retention without sleeping.
 */
export async function advanceKeys(client: Redis, prefix: string, ms: number): Promise<void> {
  const script = `
local left = redis.call('PTTL', KEYS[1])
if left < 0 then return 0 end
if left > tonumber(ARGV[1]) then return redis.call('PEXPIRE', KEYS[1], left - tonumber(ARGV[1])) end
return redis.call('DEL', KEYS[1])`;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    for (const key of keys) await client.eval(script, 1, key, String(ms));
    cursor = next;
  } while (cursor !== '0');
}
