import { DONE, type ClaimResult, type ClaimStore } from '../../core/stores/claim-store.js';
import { ms, type RedisCommands } from './client.js';
import { takeUnderToken } from './lock.js';
import { BIND, CLAIM, COMPLETE, RELEASE, REPLACE_OWN } from './scripts.js';

/**
 * Claims in Redis, one key per claim (`<prefix>claim:<key>`): `SET key token NX PX lease` takes it;
 * renewing and releasing are compare-and-set scripts, so an instance never extends or frees a claim
 * that another instance holds now (after its own lease ran out). Completing marks it done whoever
 * holds it: the work ran.
 */
export class RedisClaimStore implements ClaimStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}claim:`;
  }

  async claim(key: string, leaseMs: number): Promise<ClaimResult> {
    const redisKey = this.#prefix + key;
    // A claim taken but not heard of (its reply late, or lost with the connection) is given back, so the sender's retry does not wait for the lease to run out.
    const taken = await takeUnderToken(this.#redis, CLAIM, redisKey, (token) => [token, ms(leaseMs), DONE], leaseMs);
    const { token } = taken;
    const reply = Number(taken.reply);
    if (reply === 1) return { state: 'claimed', token };
    if (reply === 3) {
      throw new Error(`The Redis key ${redisKey} holds a value paywidget-server did not write, with no expiry (its claims always expire), so this delivery could never run. Delete the key to let it run, or SET it to done (SET ${redisKey} done PX <ms>) if the event was handled by hand.`);
    }
    return reply === 2 ? { state: 'done' } : { state: 'in_progress' };
  }

  async complete(key: string, token: string, retentionMs: number): Promise<boolean> {
    if (token === DONE) return false;
    return Number(await this.#redis.script(COMPLETE, [this.#prefix + key], [token, DONE, ms(retentionMs)])) === 1;
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    if (token === DONE) return false;
    return Number(await this.#redis.script(REPLACE_OWN, [this.#prefix + key], [token, token, ms(leaseMs)])) === 1;
  }

  async release(key: string, token: string): Promise<boolean> {
    if (token === DONE) return false;
    return Number(await this.#redis.script(RELEASE, [this.#prefix + key], [token])) === 1;
  }

  async bind(key: string, value: string, ttlMs: number): Promise<string | undefined> {
    const held = await this.#redis.script(BIND, [this.#prefix + key], [value, ms(ttlMs)]);
    return held === null || held === undefined ? undefined : String(held);
  }
}
