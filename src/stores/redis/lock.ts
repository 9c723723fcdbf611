import { ms, type RedisCommands } from './client.js';
import { RELEASE } from './scripts.js';

/**
 * `SET lockKey <random> NX PX ttl`: the token when taken, undefined while another holder has it. A lock
 * taken after the command's deadline (the call already failed) is given back, not left to run out.
 */
export async function takeLock(redis: RedisCommands, lockKey: string, ttlMs: number): Promise<string | undefined> {
  const lockToken = globalThis.crypto.randomUUID();
  const giveBack = (reply: unknown) => {
    if (reply !== null && reply !== undefined) redis.script(RELEASE, [lockKey], [lockToken]).catch(() => {});
  };
  const reply = await redis.command(['SET', lockKey, lockToken, 'NX', 'PX', ms(ttlMs)], giveBack);
  return reply === null || reply === undefined ? undefined : lockToken;
}

/** Deletes the lock only while `lockToken` still holds it. */
export async function freeLock(redis: RedisCommands, lockKey: string, lockToken: string): Promise<void> {
  await redis.script(RELEASE, [lockKey], [lockToken]);
}
