import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

describe('sharedStores', () => {
  it('leaves nothing running once Redis could not be reached, so the command exits at once', async () => {
    // In a process of its own, where no other timer runs: what is left after the failure is the library's.
    const script = `
      import { sharedStores } from './src/cli/shared-stores.ts';
      const failure = await sharedStores({ REDIS_URL: 'redis://127.0.0.1:1' }).then(() => 'connected', (error) => error.code);
      await new Promise((resolve) => setTimeout(resolve, 20)); // what is due at once has run
      console.log(JSON.stringify({ failure, timers: process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout') }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: new URL('../..', import.meta.url), timeout: 20_000 });
    // ioredis's disconnect waited 2 s (its disconnectTimeout) for a close the failed connection had already had.
    expect(JSON.parse(stdout)).toEqual({ failure: 'STORE_UNAVAILABLE', timers: [] });
  });
});
