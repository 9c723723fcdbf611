import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A process that creates a pay instance as the caller says and sends it a webhook whose body a JSON parser already ate. */
async function stderrOf(options: string): Promise<{ stdout: string; stderr: string }> {
  const script = `
    import { createPay, silentLogger } from './src/index.ts';
    const pay = createPay({ env: {}, payment: { apiUrl: 'http://127.0.0.1:9', merchantId: 'm', apiKey: 'sk_never_printed', webhookSecret: 'whsec_never_printed' }${options} });
    const response = await pay.handle({ method: 'POST', path: '/webhooks', headers: {}, parsedBody: { type: 'payment.succeeded' } });
    console.log(response.status);`;
  return promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root });
}

describe('the default logger', () => {
  it('puts warnings on stderr, so a refused webhook is seen without configuring a logger, and no secret with it', async () => {
    const { stdout, stderr } = await stderrOf('');
    expect(stdout.trim()).toBe('400');
    expect(stderr).toMatch(/paywidget-server: webhook refused/);
    expect(stderr).toContain('WEBHOOK_BODY_NOT_RAW');
    expect(stderr).not.toMatch(/never_printed/);
  });

  it('is muted by silentLogger', async () => {
    const { stdout, stderr } = await stderrOf(', logger: silentLogger');
    expect(stdout.trim()).toBe('400');
    expect(stderr).toBe('');
  });
});
