import { describe, expect, it } from 'vitest';
import type { ClaimStore } from 'paywidget-server';
import type { MakeStore } from './store-under-test.js';

/** The behaviour every ClaimStore must show; the Redis store runs the same contract. */
export function claimStoreContract(name: string, make: MakeStore<ClaimStore>): void {
  describe(`${name}: ClaimStore contract`, () => {
    it('claims a free key once; a second claim sees it in progress', async () => {
      const { store } = await make();
      const first = await store.claim('k', 1_000);
      expect(first.state).toBe('claimed');
      expect(await store.claim('k', 1_000)).toEqual({ state: 'in_progress' });
    });

    it('complete with the token marks the key done; claims then see done', async () => {
      const { store } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      expect(await store.complete('k', claim.token, 10_000)).toBe(true);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
      // Done is final for its holder too: completing or releasing again does nothing.
      expect(await store.complete('k', claim.token, 10_000)).toBe(false);
      expect(await store.release('k', claim.token)).toBe(false);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
    });

    it('release with the token frees the key for the next claim', async () => {
      const { store } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      expect(await store.release('k', claim.token)).toBe(true);
      const again = await store.claim('k', 1_000);
      expect(again.state).toBe('claimed');
      expect(again.state === 'claimed' && again.token).not.toBe(claim.token);
    });

    it('a wrong token neither releases nor renews', async () => {
      const { store } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      expect(await store.release('k', 'not-the-token')).toBe(false);
      expect(await store.renew?.('k', 'not-the-token', 1_000)).toBe(false);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'in_progress' });
      expect(await store.release('missing', claim.token)).toBe(false);
    });

    it('renew extends the holder\'s lease, takes a lapsed key back, and does nothing to a done key', async () => {
      const { store, advance } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      await advance(800);
      expect(await store.renew!('k', claim.token, 1_000)).toBe(true);
      await advance(800); // 1,600 ms after the claim: held only because it was renewed
      expect(await store.claim('k', 1_000)).toEqual({ state: 'in_progress' });
      await advance(1_001);
      expect(await store.renew!('k', claim.token, 1_000)).toBe(true);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'in_progress' });
      expect(await store.complete('k', claim.token, 10_000)).toBe(true);
      expect(await store.renew!('k', claim.token, 1_000)).toBe(false);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
    });

    it('a completion after the lease ran out unclaimed still marks the key done, so a duplicate does not run again', async () => {
      const { store, advance } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      await advance(1_001);
      expect(await store.complete('k', claim.token, 10_000)).toBe(true);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
    });

    it('a lease runs out: the key can be claimed again, and the old holder can no longer release or renew it', async () => {
      const { store, advance } = await make();
      const old = await store.claim('k', 1_000);
      if (old.state !== 'claimed') throw new Error('not claimed');
      await advance(1_001);
      const next = await store.claim('k', 1_000);
      expect(next.state).toBe('claimed');
      expect(await store.release('k', old.token)).toBe(false);
      expect(await store.renew?.('k', old.token, 1_000)).toBe(false);
      expect(next.state === 'claimed' && (await store.complete('k', next.token, 10_000))).toBe(true);
    });

    it('the old holder completing over the next one\'s lease marks the key done: its work ran, and nothing runs it again', async () => {
      const { store, advance } = await make();
      const old = await store.claim('k', 1_000);
      if (old.state !== 'claimed') throw new Error('not claimed');
      await advance(1_001);
      const next = await store.claim('k', 1_000);
      if (next.state !== 'claimed') throw new Error('not claimed');
      expect(await store.complete('k', old.token, 10_000)).toBe(false); // false: another held it
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
      // The next holder failing does not free it for a third run; completing finds it done.
      expect(await store.release('k', next.token)).toBe(false);
      expect(await store.complete('k', next.token, 10_000)).toBe(false);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
    });

    it('done is kept for the retention, then forgotten', async () => {
      const { store, advance } = await make();
      const claim = await store.claim('k', 1_000);
      if (claim.state !== 'claimed') throw new Error('not claimed');
      await store.complete('k', claim.token, 5_000);
      await advance(4_000);
      expect(await store.claim('k', 1_000)).toEqual({ state: 'done' });
      await advance(1_001);
      expect((await store.claim('k', 1_000)).state).toBe('claimed');
    });

    it('keys are independent and tokens unique', async () => {
      const { store } = await make();
      const claims = await Promise.all(Array.from({ length: 50 }, (_, i) => store.claim(`k${i}`, 1_000)));
      const tokens = claims.map((c) => (c.state === 'claimed' ? c.token : ''));
      expect(new Set(tokens).size).toBe(50);
      expect(tokens.every((t) => t !== '' && t !== 'done')).toBe(true);
    });

    it('concurrent claims of one key: exactly one wins', async () => {
      const { store } = await make();
      const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim('same', 1_000)));
      expect(claims.filter((c) => c.state === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.state === 'in_progress')).toHaveLength(49);
    });

    it('bind sets a free key and answers what a taken key holds, until its time-out', async () => {
      const { store, advance } = await make();
      expect(await store.bind('b', 'evt_1', 2_000)).toBeUndefined();
      expect(await store.bind('b', 'evt_2', 2_000)).toBe('evt_1');
      expect(await store.bind('b', 'evt_1', 2_000)).toBe('evt_1');
      await advance(2_001);
      expect(await store.bind('b', 'evt_2', 2_000)).toBeUndefined();
      expect(await store.bind('b', 'evt_1', 2_000)).toBe('evt_2');
    });

    it('concurrent binds of one key: exactly one sets it, every other answers its value', async () => {
      const { store } = await make();
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => store.bind('race', `evt_${i}`, 1_000)));
      const winner = answers.indexOf(undefined);
      expect(winner).not.toBe(-1);
      expect(answers.filter((a) => a === undefined)).toHaveLength(1);
      expect(answers.filter((a) => a === `evt_${winner}`)).toHaveLength(19);
    });
  });
}
