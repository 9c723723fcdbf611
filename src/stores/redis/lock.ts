import { ms, type RedisCommands } from './client.js';
import { RELEASE, TAKE_LOCK } from './scripts.js';

/**
 * `SET lockKey <random> NX PX ttl` (TAKE_LOCK): the token when taken, undefined while another holder has it.
 * A lock taken after the command's deadline (the call already failed) is given back, not left to run out.
 */
export async function takeLock(redis: RedisCommands, lockKey: string, ttlMs: number): Promise<string | undefined> {
  const lockToken = globalThis.crypto.randomUUID();
  const giveBack = (reply: unknown) => {
    if (Number(reply) === 1) redis.script(RELEASE, [lockKey], [lockToken]).catch(() => {});
  };
  const reply = await redis.script(TAKE_LOCK, [lockKey], [lockToken, ms(ttlMs)], giveBack);
  return Number(reply) === 1 ? lockToken : undefined;
}

/** Deletes the lock only while `lockToken` still holds it. */
export async function freeLock(redis: RedisCommands, lockKey: string, lockToken: string): Promise<void> {
  await redis.script(RELEASE, [lockKey], [lockToken]);
}
