/** `npm run demo`: the walkthrough passes, reads as sentences, prints no secret, and names the step that failed. */
import { execFile } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createOutput } from '../../demo/output.js';
import { runSteps } from '../../demo/run.js';
import { startDemoStack } from '../../demo/stack.js';
import { STEPS } from '../../demo/steps.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function demo(args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'demo/main.ts', ...args], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

/** What must never be printed: API key, webhook secret, admin password, payment client tokens, whole widget tokens, admin tokens. */
const SECRETS = [/sk_test_/, /whsec_/, /pw_[0-9a-f]/, /pct_/, /wt_[0-9a-f]{7,}/, /\b[0-9a-f]{32}\b/];

describe('npm run demo', () => {
  it('walks through every step, exits 0, and prints no secret', async () => {
    const { code, stdout, stderr } = await demo();
    expect(stderr).not.toMatch(/demo:/);
    expect(code).toBe(0);
    for (const [i, step] of STEPS.entries()) {
      expect(stdout).toContain(`${i + 1}. ${step.title}`);
      expect(stdout).toMatch(new RegExp(`${i + 1}\\. ${step.name.replace(/[.,]/g, '\\$&')} +✓ passed`));
    }
    expect(stdout.match(/^ {3}✓ /gm)).toHaveLength(STEPS.length);
    expect(stdout).toContain(`All ${STEPS.length} steps did what they should`);
    expect(stdout).toMatch(/wt_[0-9a-f]{6}…/); // the widget token, shortened
    for (const secret of SECRETS) expect(stdout).not.toMatch(secret);
    expect(stdout).not.toContain('\x1b['); // no color when stdout is not a terminal
  }, 60_000);

  it('refuses an unknown option with exit code 2 and the usage', async () => {
    const { code, stderr } = await demo(['--bogus']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/Unknown option '--bogus'[\s\S]*Usage: npm run demo/);
  });
});

describe('a step that does not do what it should', () => {
  it('stops the walkthrough there, says which step and what was expected, and skips the rest', async () => {
    const stack = await startDemoStack();
    let text = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString('utf8');
        callback();
      },
    });
    const out = createOutput(sink, {});
    try {
      // The payment service posts its webhooks to a path the merchant backend does not serve.
      stack.sandbox.setWebhookUrl(`${stack.merchantUrl}/not-the-webhook-route`);
      const result = await runSteps(STEPS, { stack, say: out.say, waitMs: 1000, usedOrders: new Set() }, out);
      expect(result.ok).toBe(false);
      expect(result.failure).toMatch(/^step 4 \(webhook\) failed: expected the merchant backend to answer evt_\w+ with 200 at http:\/\/127\.0\.0\.1:\d+\/not-the-webhook-route, got answers 404/);
      expect(result.results.map((r) => r.state)).toEqual(['passed', 'passed', 'passed', 'failed', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped']);
      expect(text).toContain(`✗ ${result.failure}`);
      expect(text).not.toContain('5. A duplicate delivery');
    } finally {
      await stack.close();
    }
  });
});
