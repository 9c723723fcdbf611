import { ms, type RedisCommands, type Script } from './client.js';
import { RELEASE, TAKE_LOCK } from './scripts.js';

/** When a take that failed is given back, best effort (ms after the failure), while its time lasts. */
const GIVE_BACK_AFTER_MS = [250, 1_000, 4_000];

/**
 * Runs a script that takes `key` under a fresh random token (CLAIM, TAKE_LOCK: reply 1 when taken), and gives back
 * a take its caller never learned of. Its reply may come after the deadline (given back at once), or be lost with
 * the connection after Redis ran it (given back a few times over, while the client reconnects): either would hold
 * the key, with no one working under it, until its time ran out, and every retry would wait. RELEASE deletes only
 * under this token, so giving back what was never taken does nothing.
 */
export async function takeUnderToken(redis: RedisCommands, script: Script, key: string, args: (token: string) => string[], ttlMs: number): Promise<{ token: string; reply: unknown }> {
  const token = globalThis.crypto.randomUUID();
  const giveBack = () => redis.script(RELEASE, [key], [token]);
  try {
    const reply = await redis.script(script, [key], args(token), (late) => {
      if (Number(late) === 1) giveBack().catch(() => {});
    });
    return { token, reply };
  } catch (error) {
    giveBackLater(giveBack, ttlMs);
    throw error;
  }
}

/** Tries `giveBack` after each delay until one answers, while the take could still hold (timers that keep no process alive). */
function giveBackLater(giveBack: () => Promise<unknown>, ttlMs: number, attempt = 0): void {
  const delay = GIVE_BACK_AFTER_MS[attempt];
  if (delay === undefined || delay >= ttlMs) return;
  const timer = setTimeout(() => void giveBack().catch(() => giveBackLater(giveBack, ttlMs, attempt + 1)), delay);
  (timer as { unref?: () => void }).unref?.();
}

/** `SET lockKey <random> NX PX ttl` (TAKE_LOCK): the token when taken, undefined while another holder has it. */
export async function takeLock(redis: RedisCommands, lockKey: string, ttlMs: number): Promise<string | undefined> {
  const { token, reply } = await takeUnderToken(redis, TAKE_LOCK, lockKey, (lockToken) => [lockToken, ms(ttlMs)], ttlMs);
  return Number(reply) === 1 ? token : undefined;
}

/** Deletes the lock only while `lockToken` still holds it. */
export async function freeLock(redis: RedisCommands, lockKey: string, lockToken: string): Promise<void> {
  await redis.script(RELEASE, [lockKey], [lockToken]);
}
