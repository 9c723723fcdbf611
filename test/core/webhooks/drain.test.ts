/** pay.drain(): the claim writes retried in the background, waited for at shutdown. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));

describe('pay.drain()', () => {
  it('keeps a process with nothing else to do alive until the done mark retried in the background has landed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/core/webhooks/fixtures/drain-then-exit.ts'], { cwd: root, timeout: 20_000 });
    expect(JSON.parse(stdout.trim())).toEqual({ status: 200, failedFirst: true, completed: true });
  });
});
