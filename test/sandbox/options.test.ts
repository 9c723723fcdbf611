import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { call, mint } from './helpers.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('startSandbox options', () => {
  it('refuses an option it does not have, at each level, naming the ones it has', async () => {
    await expect(startSandbox({ webhookURL: 'http://127.0.0.1:1/hook' } as never)).rejects.toThrow(/startSandbox has no option webhookURL; its options are port, .*webhookUrl/);
    await expect(startSandbox({ webhookRetry: { attempt: 1 } } as never)).rejects.toThrow(/webhookRetry has no option attempt; its options are attempts, baseDelayMs, timeoutMs/);
    await expect(startSandbox({ commerce: { order: 3 } } as never)).rejects.toThrow(/commerce has no option order; its options are port, orders,/);
    await expect(startSandbox({ commerce: 'yes' } as never)).rejects.toThrow('commerce must be an object');
  });

  it('refuses a port that is not one before listening, so a string from the environment leaves no server behind', async () => {
    for (const [options, name] of [[{ port: 'abc' }, 'port'], [{ widgetPort: 70_000 }, 'widgetPort'], [{ commerce: { port: 1.5 } }, 'commerce.port']] as const) {
      await expect(startSandbox(options as never)).rejects.toThrow(`${name} must be a whole number from 0 to 65535`);
    }
    // In a process of its own: a server left listening would keep it from exiting, and Node takes a string port for a socket file.
    const cwd = await mkdtemp(join(tmpdir(), 'paywidget-sandbox-port-'));
    try {
      const script = `
        import { startSandbox } from ${JSON.stringify(join(root, 'src/sandbox/index.ts'))};
        await startSandbox({ port: process.env.PORT }).then(() => console.log('started'), (error) => console.log(error.message));`;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href, '--input-type=module', '-e', script], { cwd, env: { ...process.env, PORT: 'abc' }, timeout: 10_000 });
      expect(stdout).toContain('port must be a whole number from 0 to 65535 (0: a free port), got "abc" (read it with Number())');
      expect(await readdir(cwd)).toEqual([]);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
});

describe('startSandbox without a clock', () => {
  it('reads Date.now() at each reading, so fake timers that replace Date expire its tokens', async () => {
    const sb = await startSandbox();
    try {
      const token = await mint(sb);
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 15 * 60_000 + 1_000);
      const lookup = await call(`${sb.paymentUrl}/api/v1/checkout/lookup`, { body: { widget_token: token } });
      expect(lookup.status).toBe(410);
    } finally {
      vi.useRealTimers();
      await sb.close();
    }
  });
});
