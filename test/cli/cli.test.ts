import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { constants, createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { appendFile, chmod, link, lstat, mkdir, mkdtemp, open, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from 'paywidget-server/sandbox';
import { lockCheckpointFile } from '../../src/cli/checkpoint-lock.js';
import { forTheShell } from '../../src/cli/for-the-shell.js';
import { main } from '../../src/cli/main.js';
import { createOrders } from '../../src/core/commerce/index.js';
import { resolveCommerceConfig } from '../../src/core/config.js';
import type { PayError } from '../../src/core/errors.js';
import { silentLogger } from '../../src/core/logger.js';

let sb: Sandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ commerce: { orders: 480 } });
  dir = await mkdtemp(join(tmpdir(), 'paywidget-cli-'));
});
afterAll(async () => {
  await sb.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ COMMERCE_URL: sb.commerceUrl, COMMERCE_USERNAME: sb.commerceUsername, COMMERCE_PASSWORD: sb.commercePassword });

/** A stream that keeps what is written; `onWrite` may fail or stop the command. */
function sink(options: { tty?: boolean; onWrite?: (text: string, all: string) => Error | void } = {}) {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback(options.onWrite?.(chunk.toString('utf8'), text) ?? null);
    },
  }) as Writable & { isTTY?: boolean; columns?: number };
  if (options.tty) Object.assign(stream, { isTTY: true, columns: 100 });
  return { stream, text: () => text };
}

async function run(argv: string[], io: { env?: Record<string, string | undefined>; stdout?: ReturnType<typeof sink>; stderr?: ReturnType<typeof sink>; signal?: AbortSignal } = {}) {
  const stdout = io.stdout ?? sink();
  const stderr = io.stderr ?? sink();
  const code = await main(argv, { stdout: stdout.stream, stderr: stderr.stream, env: io.env ?? env(), signal: io.signal });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A FIFO whose reader takes about 100 lines, then stops the run, as Ctrl-C stops a whole pipeline (the reader with it). */
async function fifoStoppingTheRun(name: string) {
  const fifo = join(dir, name);
  await promisify(execFile)('mkfifo', [fifo]);
  const reader = createReadStream(fifo);
  const controller = new AbortController();
  let received = '';
  reader.on('data', (chunk: string | Buffer) => {
    received += chunk.toString();
    if (received.split('\n').length > 100) controller.abort();
  });
  return { fifo, reader, signal: controller.signal, received: () => received };
}

const lines = (text: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { entity_id: number });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('paywidget CLI', () => {
  it.each([
    [['--help'], 0, 'stdout', /Usage: paywidget <command>[\s\S]*orders/],
    // Exit code 4 (still unresolved) is payments reconcile's, not reconcile's.
    [['--help'], 0, 'stdout', /3 and 4 what 'reconcile' or\n'payments reconcile' found/],
    [[], 2, 'stderr', /Usage: paywidget <command>/],
    [['--version'], 0, 'stdout', /^dev\n$/], // from the sources; the build puts in the package's version
    [['orders', '--help'], 0, 'stdout', /get <entity_id>[\s\S]*sync/],
    // As git has it: 'help <command>' is that command's help.
    [['help', 'orders'], 0, 'stdout', /get <entity_id>[\s\S]*sync/],
    [['help', 'orders', 'sync'], 0, 'stdout', /--checkpoint FILE[\s\S]*--out FILE/],
    [['help', 'nothing'], 2, 'stderr', /unknown command 'nothing'/],
    [['orders', 'get', '--help'], 0, 'stdout', /Usage: paywidget orders get <entity_id>[\s\S]*COMMERCE_URL/],
    [['orders', 'sync', '-h'], 0, 'stdout', /--checkpoint FILE[\s\S]*--out FILE/],
    [['refunds'], 2, 'stderr', /paywidget: unknown command 'refunds'[\s\S]*paywidget --help/],
    [['orders', 'sync', '--bogus'], 2, 'stderr', /Unknown option '--bogus'[\s\S]*paywidget orders sync --help/],
    [['orders', 'sync', '--from', 'yesterday'], 2, 'stderr', /--from 'yesterday' is not a date/],
    [['orders', 'sync', '--page-size', '0'], 2, 'stderr', /--page-size must be a positive integer/],
    // Number() would read these as 16, 100 and 5: people mean digits.
    [['orders', 'sync', '--page-size', '0x10'], 2, 'stderr', /--page-size must be a positive integer \(got '0x10'\)/],
    [['orders', 'sync', '--page-size', '1e2'], 2, 'stderr', /--page-size must be a positive integer \(got '1e2'\)/],
    [['payments', 'reconcile', 'pay_1', '--budget', ' 5'], 2, 'stderr', /--budget must be a whole number of milliseconds/],
    [['reconcile', '--from', '2025-03-01', '--to', '2025-03-02', '--lookbehind-hours', '0x10'], 2, 'stderr', /--lookbehind-hours must be a number of hours/],
    [['orders', 'get'], 2, 'stderr', /expected one order entity_id/],
    [['orders', 'get', '1', '2'], 2, 'stderr', /expected one order entity_id/],
    // Values the CLI's pattern would pass but the core refuses: usage errors too, not failed runs.
    [['orders', 'get', '0'], 2, 'stderr', /expected one order entity_id \(a positive integer of at most 15 digits\)/],
    [['orders', 'get', '1234567890123456'], 2, 'stderr', /expected one order entity_id/],
    // An increment_id (the number shoppers see) where the entity_id belongs: a usage error that says so.
    [['orders', 'get', '000000005'], 2, 'stderr', /'000000005' has a leading zero, as an increment_id has[\s\S]*entity_id[\s\S]*paywidget orders get --help/],
    [['orders', 'sync', '--from', '2025-02-30'], 2, 'stderr', /--from '2025-02-30' is not a real date[\s\S]*paywidget orders sync --help/],
    [['orders', 'sync', '--to', '2025-02-29T10:00:00Z'], 2, 'stderr', /--to '2025-02-29T10:00:00Z' is not a date/], // Date would roll it to March 1
    [['orders', 'sync', '--from', '2025-13-01 00:00:00'], 2, 'stderr', /--from '2025-13-01 00:00:00' is not a real date/],
    [['orders', 'sync', '--from', '0050-01-01'], 2, 'stderr', /--from '0050-01-01' is not a real date and time \(within the years 1000 to 9999\)/],
    [['orders', 'sync', '--from', '2025-03-02', '--to', '2025-03-01'], 2, 'stderr', /--from \(2025-03-02 00:00:00 UTC\) is after --to \(2025-03-01 23:59:59 UTC\)/],
    [['orders', 'sync', '--status', 'pending,complete'], 2, 'stderr', /--status must be one status code[\s\S]*repeat --status/],
    [['orders', 'sync', '--status', ' pending'], 2, 'stderr', /--status must be one status code such as 'pending' \(got ' pending'\)/],
    // parseArgs keeps the last: the run would go on with 2030 without a word.
    [['orders', 'sync', '--from', '2024-01-01', '--from', '2030-01-01'], 2, 'stderr', /--from was given twice \("--from" again\); give it once[\s\S]*paywidget orders sync --help/],
    [['reconcile', '--from', '2025-03-01', '--to', '2025-03-02', '--to=2025-03-03'], 2, 'stderr', /--to was given twice/],
    // The platform keeps whole seconds: --from moves up to the next one, --to down.
    [['orders', 'sync', '--from', '2025-03-01T00:00:00.5Z', '--to', '2025-03-01T00:00:00.9Z'], 2, 'stderr', /--from \(2025-03-01 00:00:01 UTC\) is after --to \(2025-03-01 00:00:00 UTC\)/],
    [['orders', 'sync', '--checkpoint', ''], 2, 'stderr', /--checkpoint needs a file name[\s\S]*paywidget orders sync --help/],
    [['orders', 'sync', '--out', ''], 2, 'stderr', /--out needs a file name/],
    [['reconcile', '--from', '2025-03-02', '--to', '2025-02-30'], 2, 'stderr', /--to '2025-02-30' is not a real date/],
    [['reconcile', '--from', '2025-03-02', '--to', '2025-03-01'], 2, 'stderr', /--from \(2025-03-02 00:00:00 UTC\) is after --to/],
    [['reconcile', '--from', '2025-03-01', '--to', '2025-03-02', '--lookbehind-hours', '1e12'], 2, 'stderr', /--lookbehind-hours must be a number of hours[\s\S]*paywidget reconcile --help/],
    [['payments', 'reconcile', 'pay x/../y'], 2, 'stderr', /'pay x\/\.\.\/y' is not a payment_id[\s\S]*paywidget payments reconcile --help/],
    [['sandbox', '--orders', '999999999999'], 2, 'stderr', /--orders must be a whole number up to 1000000/],
  ])('%j exits %i with help or a clear error', async (argv, code, where, pattern) => {
    const result = await run(argv);
    expect(result.code).toBe(code);
    expect(result[where as 'stdout' | 'stderr']).toMatch(pattern);
  });

  it('needs only the COMMERCE_* variables, and names them when missing', async () => {
    const result = await run(['orders', 'get', '1'], { env: {} });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/COMMERCE_URL\).*COMMERCE_USERNAME\).*COMMERCE_PASSWORD\).*\[CONFIG_MISSING\]/);
    // At a shell the environment is the only configuration: no createPay() advice.
    expect(result.stderr).toMatch(/Export the variable, or set it for one run/);
    expect(result.stderr).not.toMatch(/createPay/);
    const half = await run(['orders', 'get', '1'], { env: { COMMERCE_URL: sb.commerceUrl } });
    expect(half.code).toBe(1);
    expect(half.stderr).toMatch(/COMMERCE_USERNAME.*COMMERCE_PASSWORD.*\[CONFIG_MISSING\]/);
    expect(half.stderr).not.toMatch(/environment variable COMMERCE_URL/);
    const invalid = await run(['orders', 'get', '1'], { env: { ...env(), COMMERCE_READ_METHOD: 'PUT' } });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/COMMERCE_READ_METHOD.*Correct the variable in the environment, or set it for one run.*\[CONFIG_INVALID\]/);
    expect(invalid.stderr).not.toMatch(/createPay/);
  });

  it('advises what a shell can change when the platform times out (the CLI has no timeout option)', async () => {
    const hang = sb.commerce.faults.inject({ route: '/rest/default/V1/orders/3', hang: true });
    try {
      const { commerce, http } = resolveCommerceConfig({ env: env(), http: { attemptTimeoutMs: 100, maxRetries: 0 } });
      const error = await createOrders(commerce!, { http, logger: silentLogger }).get(3).then(() => undefined, (e: unknown) => e as PayError);
      expect(error?.code).toBe('UPSTREAM_TIMEOUT');
      expect(error!.message).toContain('http.attemptTimeoutMs');
      expect(forTheShell(error!.message)).toMatch(/did not answer within 100 ms\. Check that it is up; if it is only slow, run the command again later\.$/);
    } finally {
      sb.commerce.faults.remove(hang);
    }
  });

  it('advises what a shell can change when the whole call runs out of time, retries included', async () => {
    const hang = sb.commerce.faults.inject({ route: '/rest/default/V1/orders/3', hang: true });
    try {
      const { commerce, http } = resolveCommerceConfig({ env: env(), http: { attemptTimeoutMs: 10_000, totalTimeoutMs: 150, maxRetries: 0 } });
      const error = await createOrders(commerce!, { http, logger: silentLogger }).get(3).then(() => undefined, (e: unknown) => e as PayError);
      expect(error?.code).toBe('UPSTREAM_TIMEOUT');
      expect(error!.message).toContain('http.totalTimeoutMs');
      expect(forTheShell(error!.message)).toMatch(/did not answer within the 150 ms the call has in all, retries included\. If it is only slow, run the command again later\.$/);
    } finally {
      sb.commerce.faults.remove(hang);
    }
  });

  it('orders get prints the order as JSON', async () => {
    const result = await run(['orders', 'get', '17']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(sb.commerce.order(17));
    const missing = await run(['orders', 'get', '99999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Order 99999 was not found.*\[ORDER_NOT_FOUND\]/);
    const wrong = await run(['orders', 'get', '1'], { env: { ...env(), COMMERCE_PASSWORD: 'wrong' } });
    expect(wrong.stderr).toMatch(/\[COMMERCE_AUTH_FAILED\]/);
    expect(wrong.stderr + missing.stderr).not.toContain(sb.commercePassword);
  });

  it('orders get stops at once when interrupted (exit 130), however long the platform takes', async () => {
    const slow = sb.commerce.faults.inject({ route: '/rest/default/V1/orders/7', latencyMs: 60_000 });
    try {
      const controller = new AbortController();
      const running = run(['orders', 'get', '7'], { signal: controller.signal });
      // The fault is used up when the request arrives: from then on the command waits on the platform.
      const deadline = Date.now() + 10_000;
      while (sb.commerce.faults.list().some((fault) => fault.id === slow)) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the order request to reach the platform');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const interrupted = performance.now();
      controller.abort();
      const result = await running;
      expect(result).toMatchObject({ code: 130, stdout: '', stderr: 'paywidget orders get: interrupted.\n' });
      // Not a speed check: it guards that the interruption does not wait for the platform's 60 s answer.
      // Stopping takes a few ms; 10 s is far above that and far below the latency.
      expect(performance.now() - interrupted).toBeLessThan(10_000);
    } finally {
      sb.commerce.faults.remove(slow);
    }
  });

  it('orders sync interrupted says so, and still says when its position could not be saved on the way out', async () => {
    const checkpoint = join(dir, 'unsavable.json');
    const controller = new AbortController();
    // Stopped mid-page, with orders since the last save: after the first page (saved), replaceFile's own file becomes a
    // directory, so the save on the way out fails with EISDIR.
    const stdout = sink({ onWrite: (_text, all) => {
      const written = all.split('\n').length - 1;
      if (written === 51) mkdirSync(`${checkpoint}.${process.pid}.tmp`);
      if (written === 60) controller.abort();
    } });
    try {
      const result = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { stdout, signal: controller.signal });
      expect(result.code).toBe(130);
      expect(result.stderr).toMatch(new RegExp(`^paywidget orders sync: The checkpoint file ${checkpoint.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} could not be written \\(EISDIR`));
      expect(JSON.parse(JSON.parse(await readFile(checkpoint, 'utf8'))['orders-sync'])).toMatchObject({ lastEntityId: 50 });
    } finally {
      await rm(`${checkpoint}.${process.pid}.tmp`, { recursive: true });
    }
  });

  it('remembers a refused login across runs, so a cron job never locks the account, and never writes the token', async () => {
    const state = join(dir, 'state');
    const wrong = { ...env(), COMMERCE_PASSWORD: 'wrong-after-rotation', PAYWIDGET_STATE_DIR: state };
    const before = sb.commerce.stats().tokenRequests;
    const first = await run(['orders', 'get', '1'], { env: wrong });
    expect(first.stderr).toMatch(/\[COMMERCE_AUTH_FAILED\]/);
    expect(sb.commerce.stats().tokenRequests).toBe(before + 1);
    // The next runs, other commands too, fail at once: the platform is not asked again.
    const again = await run(['orders', 'get', '2'], { env: wrong });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/Remembered from the login refused at .*\[COMMERCE_AUTH_FAILED\]/);
    expect((await run(['orders', 'sync', '--status', 'pending'], { env: wrong })).code).toBe(1);
    expect(sb.commerce.stats().tokenRequests).toBe(before + 1);
    // A record of the refusal, not of a credential; a successful run writes nothing there.
    const other = join(dir, 'state-ok');
    expect((await run(['orders', 'get', '1'], { env: { ...env(), PAYWIDGET_STATE_DIR: other } })).code).toBe(0);
    const saved = await readFile(join(state, 'login-refusals.json'), 'utf8');
    expect(saved).toContain('COMMERCE_AUTH_FAILED');
    expect(saved).not.toContain('wrong-after-rotation');
    await expect(readFile(join(other, 'login-refusals.json'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('says on stderr when it cannot keep a refused login (an unwritable state directory), since the next run would try it again', async () => {
    const state = join(dir, 'state-unwritable');
    const file = join(state, 'login-refusals.json');
    // The file's replacement cannot be written (a directory in its place), the file itself can be read (it is absent).
    await mkdir(`${file}.${process.pid}.tmp`, { recursive: true });
    const wrong = { ...env(), COMMERCE_PASSWORD: 'wrong-after-rotation', PAYWIDGET_STATE_DIR: state };
    try {
      const result = await run(['orders', 'get', '1'], { env: wrong });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`paywidget: warning: could not keep the refused admin login in ${file} (EISDIR on open), so the next run will try the same credentials again`);
      expect(result.stderr).toContain('Set PAYWIDGET_STATE_DIR to a directory this user can write.');
      expect(result.stderr).toMatch(/\[COMMERCE_AUTH_FAILED\]\n$/);
      expect(result.stderr).not.toContain('wrong-after-rotation');
    } finally {
      await rm(`${file}.${process.pid}.tmp`, { recursive: true });
    }
  });

  it('says on stderr that a refused login cannot be kept when there is no state directory at all (no HOME: a cron job)', async () => {
    const result = await run(['orders', 'get', '1'], { env: { ...env(), COMMERCE_PASSWORD: 'wrong-after-rotation' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('paywidget: warning: could not keep the refused admin login: there is no state directory (HOME, XDG_STATE_HOME and PAYWIDGET_STATE_DIR are all unset)');
    // A login that works says nothing of it.
    expect((await run(['orders', 'get', '1'])).stderr).toBe('');
  });

  it('says on stderr when it cannot read the refused logins it keeps, and still runs with good credentials', async () => {
    const state = join(dir, 'state-unreadable');
    await mkdir(join(state, 'login-refusals.json'), { recursive: true }); // a directory where the file should be
    const result = await run(['orders', 'get', '1'], { env: { ...env(), PAYWIDGET_STATE_DIR: state } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ entity_id: 1 });
    expect(result.stderr).toBe(`paywidget: warning: could not read the refused admin logins kept in ${join(state, 'login-refusals.json')} (EISDIR on read), so this run logs in without knowing of an earlier refusal, and a wrong password counts again towards Magento's lockout. Set PAYWIDGET_STATE_DIR to a directory this user can read and write.\n`);
  });

  it('orders sync writes NDJSON to stdout, filtered', async () => {
    const from = sb.commerce.order(100)!.created_at as string;
    const result = await run(['orders', 'sync', '--status', 'pending', '--status', 'complete', '--from', from, '--to', '2030-01-01', '--page-size', '40']);
    expect(result.code).toBe(0);
    const expected = range(100, sb.commerce.orderCount).filter((id) => ['pending', 'complete'].includes(sb.commerce.order(id)!.status as string));
    expect(lines(result.stdout).map((o) => o.entity_id)).toEqual(expected);
    expect(result.stderr).toMatch(new RegExp(`Synced ${expected.length} orders`));
    expect(result.stderr).not.toContain('\r'); // no progress bar when stderr is not a terminal
  });

  it('orders sync leaves no listener on a stdout that outlives it (main() run again in one process)', async () => {
    const stdout = sink();
    const before = stdout.stream.listenerCount('error');
    for (let i = 0; i < 3; i++) expect((await run(['orders', 'sync', '--to', '2000-01-01'], { stdout })).code).toBe(0);
    expect(stdout.stream.listenerCount('error')).toBe(before);
  });

  it('orders sync draws no progress bar when the orders go to the same terminal (its carriage returns would overwrite them)', async () => {
    const onTerminal = await run(['orders', 'sync', '--status', 'complete'], { stdout: sink({ tty: true }), stderr: sink({ tty: true }) });
    expect(onTerminal.code).toBe(0);
    expect(lines(onTerminal.stdout).length).toBeGreaterThan(0);
    expect(onTerminal.stderr).not.toContain('\r');
    // To a file (or a pipe), the terminal is the bar's alone.
    const toFile = await run(['orders', 'sync', '--status', 'complete', '--out', join(dir, 'bar.ndjson')], { stdout: sink({ tty: true }), stderr: sink({ tty: true }) });
    expect(toFile.stderr).toMatch(/\r\[#+-*\]/);
  });

  it('orders sync stopped by Ctrl-C before its first order leaves --out and the checkpoint as it found them', async () => {
    const checkpoint = join(dir, 'early-stop.checkpoint.json');
    const out = join(dir, 'early-stop.ndjson');
    await writeFile(out, 'yesterday\n'); // the wrong --out, noticed at once
    const result = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out], { signal: AbortSignal.abort() });
    expect([result.code, result.stderr]).toEqual([130, expect.stringContaining('Stopped after 0 orders.')]);
    expect(await readFile(out, 'utf8')).toBe('yesterday\n');
    expect(await readFile(checkpoint, 'utf8').catch((error: NodeJS.ErrnoException) => error.code)).toBe('ENOENT');
  });

  it('orders sync resumes from its checkpoint file after a stop, and appends to --out', async () => {
    const checkpoint = join(dir, 'stop.checkpoint.json');
    const out = join(dir, 'stop.ndjson');
    const controller = new AbortController();
    let bars = 0;
    const stderr = sink({ tty: true, onWrite: (text) => void (text.startsWith('\r') && ++bars === 2 && controller.abort()) });
    // The first page at once, the rest slowly: the stop (on the second bar, drawn at most every 100 ms) lands
    // mid-run however fast the machine and however many pages the sync asks for ahead.
    const fast = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 1, times: 1 });
    const slow = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 300, times: Infinity });
    // Other tests add orders to the shared sandbox: the count as it is, whatever ran before.
    const count = sb.commerce.orderCount;
    const first = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out, '--page-size', '50'], { stderr, signal: controller.signal });
    expect(sb.commerce.faults.list().find((fault) => fault.id === slow)?.hits).toBeGreaterThan(0);
    sb.commerce.faults.remove(slow);
    sb.commerce.faults.remove(fast);
    expect(first.code).toBe(130);
    expect(first.stderr).toMatch(new RegExp(`\\r\\[#+-*\\]\\s+\\d+%\\s+\\d+/${count} orders`));
    expect(first.stderr).toMatch(/Stopped after \d+ orders; position: entity_id \d+\. Run the same command to continue\./);
    const partial = lines(await readFile(out, 'utf8')).length;
    expect(partial).toBeGreaterThanOrEqual(50);
    expect(partial).toBeLessThan(count);
    // As a run cut off mid-write would leave it (a full disk, a power loss): part of the next order.
    await appendFile(out, '{"entity_id":999,"base_curr');

    const second = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out, '--page-size', '50']);
    expect(second.code).toBe(0);
    expect(lines(await readFile(out, 'utf8')).map((o) => o.entity_id)).toEqual(range(1, count));
    // Finished: a later run writes only new orders.
    sb.commerce.addOrder();
    await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out]);
    const ids = lines(await readFile(out, 'utf8')).map((o) => o.entity_id);
    expect([...new Set(ids)]).toEqual(range(1, count + 1));
    // Only an order added just now (by this test, or an earlier one) may be held back (settleMs) and written again.
    expect(ids.filter((id, i) => ids.indexOf(id) !== i).every((id) => id > 480)).toBe(true);
    // A fresh run (no checkpoint position) starts the file over.
    await run(['orders', 'sync', '--out', out, '--status', 'complete']);
    expect(lines(await readFile(out, 'utf8')).map((o) => o.entity_id)).toEqual(range(1, count + 1).filter((id) => sb.commerce.order(id)!.status === 'complete'));
  });

  it('orders sync without a checkpoint replaces the --out file only when it finishes: a run stopped or failed part-way leaves the old export', async () => {
    const out = join(dir, 'export.ndjson');
    const yesterday = '{"entity_id":1,"yesterday":true}\n';
    await writeFile(out, yesterday);
    const temporary = `${out}.${process.pid}.tmp`;
    /** Runs the sync, calling `midway` once its first orders reached the file it writes. */
    const part = async (midway: (slow: string) => void, signal?: AbortSignal) => {
      const slow = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 150, times: Infinity });
      const watch = setInterval(() => void stat(temporary).then((s) => s.size > 0 && (clearInterval(watch), midway(slow)), () => {}), 5);
      try {
        return await run(['orders', 'sync', '--out', out, '--page-size', '50'], signal ? { signal } : {});
      } finally {
        clearInterval(watch);
        sb.commerce.faults.remove(slow);
      }
    };
    const controller = new AbortController();
    const stopped = await part(() => controller.abort(), controller.signal);
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(new RegExp(`^Stopped after \\d+ orders(; position: entity_id \\d+)?\\. --out ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is left as it was`));
    expect(await readFile(out, 'utf8')).toBe(yesterday);
    let down: string | undefined;
    // The first matching fault applies: the latency one goes, and every search after fails.
    const failed = await part((slow) => {
      sb.commerce.faults.remove(slow);
      down ??= sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 500, times: Infinity });
    });
    sb.commerce.faults.remove(down!);
    expect(failed.code).toBe(1);
    expect(await readFile(out, 'utf8')).toBe(yesterday);
    await expect(stat(temporary)).rejects.toMatchObject({ code: 'ENOENT' });
    // Finished, it replaces the file whole, keeping its mode (an export of customers' addresses kept private), and
    // clears what a run killed before it could clean up left beside it.
    await chmod(out, 0o600);
    const dead = await new Promise<number>((resolve, reject) => {
      const child = execFile(process.execPath, ['-e', '0'], (error) => (error ? reject(error) : resolve(child.pid!)));
    });
    await writeFile(`${out}.${dead}.tmp`, 'left by a killed run');
    const yesterdayish = new Date(Date.now() - 25 * 60 * 60 * 1000);
    await utimes(`${out}.${dead}.tmp`, yesterdayish, yesterdayish);
    // Not one of this code's names, or touched recently (a run elsewhere, whose pid this process cannot see): kept.
    await writeFile(`${out}.1e3.tmp`, 'the user\'s own');
    await utimes(`${out}.1e3.tmp`, yesterdayish, yesterdayish);
    await writeFile(`${out}.${dead + 1_000_000}.tmp`, 'being written elsewhere');
    expect((await run(['orders', 'sync', '--out', out, '--page-size', '50'])).code).toBe(0);
    expect(lines(await readFile(out, 'utf8')).map((o) => o.entity_id)).toEqual(range(1, sb.commerce.orderCount));
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    await expect(stat(`${out}.${dead}.tmp`)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await readFile(`${out}.1e3.tmp`, 'utf8')).toBe('the user\'s own');
    expect(await readFile(`${out}.${dead + 1_000_000}.tmp`, 'utf8')).toBe('being written elsewhere');
  });

  it('orders sync leaves the --out file as it was when the run fails before its first order, and names --out when it cannot write', async () => {
    const out = join(dir, 'kept.ndjson');
    await writeFile(out, '{"entity_id":1}\n');
    const unconfigured = await run(['orders', 'sync', '--out', out], { env: {} });
    expect(unconfigured.stderr).toMatch(/\[CONFIG_MISSING\]/);
    const refused = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 400 });
    const failing = await run(['orders', 'sync', '--out', out]);
    sb.commerce.faults.remove(refused);
    expect([unconfigured.code, failing.code]).toEqual([1, 1]);
    expect(await readFile(out, 'utf8')).toBe('{"entity_id":1}\n');

    // A finished run with no matching order writes what it found: nothing.
    expect((await run(['orders', 'sync', '--out', out, '--to', '2000-01-01'])).code).toBe(0);
    expect(await readFile(out, 'utf8')).toBe('');

    const nowhere = await run(['orders', 'sync', '--out', join(dir, 'no-such-dir', 'orders.ndjson'), '--page-size', '50']);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toMatch(/^paywidget orders sync: Cannot write --out .*no-such-dir.*ENOENT[\s\S]*its directory must exist/);
    expect(nowhere.stderr).not.toMatch(/unexpected error/);
    // A full disk is not a path problem: no advice about the directory.
    const full = await run(['orders', 'sync', '--out', '/dev/full', '--page-size', '50']);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(/^paywidget orders sync: Cannot write --out \/dev\/full \(ENOSPC[^\n]*\)\.\n$/);
  });

  it("orders sync --out - writes to stdout, as most tools read '-'", async () => {
    const result = await run(['orders', 'sync', '--status', 'complete', '--out', '-']);
    expect(result.code).toBe(0);
    const complete = range(1, sb.commerce.orderCount).filter((id) => sb.commerce.order(id)!.status === 'complete');
    expect(lines(result.stdout).map((order) => order.entity_id)).toEqual(complete);
    await expect(stat('-')).rejects.toThrow(/ENOENT/);
  });

  it('orders sync stops on a failing output with exit 1, and the next run delivers the rest', async () => {
    const checkpoint = join(dir, 'crash.checkpoint.json');
    let count = 0;
    const broken = sink({ onWrite: () => (++count > 130 ? new Error('EIO: output device failed') : undefined) });
    const first = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { stdout: broken });
    expect(first.code).toBe(1);
    expect(first.stderr).toMatch(/^paywidget orders sync: Cannot write the orders to stdout \(EIO: output device failed\)\. Redirected to a file, .* write with --out FILE instead/);
    const saved = JSON.parse(JSON.parse(await readFile(checkpoint, 'utf8'))['orders-sync']) as { lastEntityId: number };
    expect(saved.lastEntityId).toBeLessThanOrEqual(130);
    const second = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50']);
    expect(second.code).toBe(0);
    const rest = lines(second.stdout).map((o) => o.entity_id);
    expect(rest[0]).toBe(saved.lastEntityId + 1);
    expect(rest.at(-1)).toBe(sb.commerce.orderCount);
  });

  it('orders sync stopped by a reader that went away (| head) exits 130 and leaves the position where the run started: what the reader lost is written again', async () => {
    const checkpoint = join(dir, 'head.checkpoint.json');
    // A position from an earlier run, stopped part-way (Ctrl-C) with its orders in a file.
    const controller = new AbortController();
    let written = 0;
    const earlier = sink({ onWrite: () => void (++written === 60 && controller.abort()) });
    expect((await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { stdout: earlier, signal: controller.signal })).code).toBe(130);
    const before = await readFile(checkpoint, 'utf8');
    const position = (JSON.parse(JSON.parse(before)['orders-sync']) as { lastEntityId: number }).lastEntityId;
    expect(position).toBeGreaterThan(0);

    let count = 0;
    const head = sink({ onWrite: () => (++count > 120 ? Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }) : undefined) });
    const first = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { stdout: head });
    expect(first.code).toBe(130);
    expect(first.stderr).toBe('Stopped: the reader of the output went away. The checkpoint is left where this run started, since what the reader of the output did not read is lost with it: run the same command to continue (those orders are written again).\n');
    expect(await readFile(checkpoint, 'utf8')).toBe(before);
    const second = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50']);
    expect(second.code).toBe(0);
    expect(lines(second.stdout)[0]!.entity_id).toBe(position + 1);
  });

  it('orders sync into a pipe stopped by Ctrl-C (which stops its reader too) leaves the position where the run started', async () => {
    const checkpoint = join(dir, 'pipe.checkpoint.json');
    const { fifo, reader, signal, received } = await fifoStoppingTheRun('orders.fifo');
    const writer = createWriteStream(fifo);
    await once(writer, 'open');
    try {
      const stopped = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { stdout: { stream: writer, text: received }, signal });
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toMatch(/^Stopped after \d+ orders\. The checkpoint is left where this run started/);
    } finally {
      writer.end();
      reader.destroy();
    }
    await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/); // held back into a pipe, and never written
    const next = await run(['orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50']);
    expect(lines(next.stdout)[0]!.entity_id).toBe(1);
  });

  it('orders sync resumed into a FIFO whose reader waits delivers to it (no last line to cut there)', async () => {
    const checkpoint = join(dir, 'resume-fifo.checkpoint.json');
    expect((await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', join(dir, 'resume-fifo-first.ndjson')])).code).toBe(0);
    const added = [sb.commerce.addOrder(), sb.commerce.addOrder()].map((order) => order.entity_id);
    const fifo = join(dir, 'resume.fifo');
    await promisify(execFile)('mkfifo', [fifo]);
    const reader = createReadStream(fifo); // `cat fifo`, started first
    let received = '';
    reader.on('data', (chunk: string | Buffer) => void (received += chunk.toString()));
    const closed = once(reader, 'close');
    const resumed = run(['orders', 'sync', '--checkpoint', checkpoint, '--out', fifo]);
    let settled = false;
    void resumed.finally(() => (settled = true));
    try {
      expect(await Promise.race([resumed, new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting for a reader'))])).toMatchObject({ code: 0 });
      await closed;
      // The run writes again the orders of the previous run's last minute (settleMs): the new ones are among them.
      expect(lines(received).map((order) => order.entity_id)).toEqual(expect.arrayContaining(added));
    } finally {
      // Had the reader been ended early, the run would wait for another: one that takes what comes, so it ends.
      if (!settled) createReadStream(fifo).resume();
      await resumed;
    }
  });

  it('orders sync into a pipe stopped by a failing platform keeps the position of what it delivered: the reader reads on', async () => {
    const checkpoint = join(dir, 'pipe-failure.checkpoint.json');
    const fifo = join(dir, 'failure.fifo');
    await promisify(execFile)('mkfifo', [fifo]);
    const reader = createReadStream(fifo);
    const closed = once(reader, 'close');
    let received = '';
    reader.on('data', (chunk: string | Buffer) => void (received += chunk.toString()));
    // The first page, then a platform that refuses every search (a refusal is not retried, as a 5xx is for a while).
    const first = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', latencyMs: 1, times: 1 });
    const down = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders', status: 400, body: '{"message":"The search is refused."}', times: Infinity });
    try {
      const failed = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', fifo, '--page-size', '50']);
      expect(failed.code).toBe(1);
      await closed;
      expect(lines(received).map((order) => order.entity_id)).toEqual(range(1, 50));
      expect(JSON.parse(JSON.parse(await readFile(checkpoint, 'utf8'))['orders-sync'])).toMatchObject({ lastEntityId: 50 });
    } finally {
      sb.commerce.faults.remove(first);
      sb.commerce.faults.remove(down);
      reader.destroy();
    }
  });

  it('orders sync with --out naming a FIFO, stopped by Ctrl-C, leaves the position where the run started too', async () => {
    const checkpoint = join(dir, 'out-fifo.checkpoint.json');
    const { fifo, reader, signal } = await fifoStoppingTheRun('out.fifo');
    try {
      const stopped = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', fifo, '--page-size', '50'], { signal });
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toMatch(/^Stopped after \d+ orders\. The checkpoint is left where this run started/);
    } finally {
      reader.destroy();
    }
    await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/); // held back into a pipe, and never written
  });

  it('orders sync into a pipe whose reader reads nothing (less, not scrolled) stops at Ctrl-C, its position where the run started', async () => {
    const checkpoint = join(dir, 'stalled.checkpoint.json');
    const fifo = join(dir, 'stalled.fifo');
    await promisify(execFile)('mkfifo', [fifo]);
    const reader = open(fifo, 'r'); // opened, never read: the pipe fills after a few orders
    const controller = new AbortController();
    const running = run(['orders', 'sync', '--checkpoint', checkpoint, '--out', fifo, '--page-size', '5'], { signal: controller.signal });
    try {
      await reader;
      await new Promise((resolve) => setTimeout(resolve, 500));
      // Pages went into the pipe, and no position was saved for them: a kill here (or a second Ctrl-C) leaves none behind.
      await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/);
      controller.abort();
      const stopped = await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting on the reader'))]);
      expect(stopped).toMatchObject({ code: 130, stderr: expect.stringMatching(/^Stopped after \d+ orders\. The checkpoint is left where this run started/) });
      await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/); // held back into a pipe, and never written
    } finally {
      await (await reader).close(); // the write still under way fails (EPIPE), so the run ends whatever happened above
      await running;
    }
  });

  it('orders sync refuses a checkpoint another sync is using (exit 75), and leaves no lock behind', async () => {
    const checkpoint = join(dir, 'shared.checkpoint.json');
    const out = join(dir, 'shared.ndjson');
    const release = await lockCheckpointFile(checkpoint); // as a run in progress holds it
    const refused = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out]);
    expect(refused.code).toBe(75);
    expect(refused.stderr).toMatch(new RegExp(`paywidget orders sync: another 'paywidget orders sync' is using the checkpoint .*shared\\.checkpoint\\.json \\(pid ${process.pid} on `));
    await expect(readFile(out, 'utf8')).rejects.toThrow(/ENOENT/); // refused before it wrote anything
    await release();

    const ran = await run(['orders', 'sync', '--checkpoint', checkpoint, '--out', out]);
    expect(ran.code).toBe(0);
    expect(lines(await readFile(out, 'utf8'))).toHaveLength(sb.commerce.orderCount);
    await expect(readFile(`${checkpoint}.lock`, 'utf8')).rejects.toThrow(/ENOENT/);
    // A failed run lets go of it too.
    const failed = await run(['orders', 'sync', '--checkpoint', checkpoint], { env: { ...env(), COMMERCE_PASSWORD: 'wrong' } });
    expect(failed.code).toBe(1);
    await expect(readFile(`${checkpoint}.lock`, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('orders sync takes a checkpoint named through a link as the file it names: one lock, and the link kept', async () => {
    const real = join(dir, 'linked.checkpoint.json');
    const viaLink = join(dir, 'link-to.checkpoint.json');
    await writeFile(real, '{}\n');
    await symlink(real, viaLink);
    const release = await lockCheckpointFile(real); // a run in progress under the file's own name
    const refused = await run(['orders', 'sync', '--checkpoint', viaLink, '--out', join(dir, 'linked-a.ndjson')]);
    expect(refused.code).toBe(75);
    await release();
    const ran = await run(['orders', 'sync', '--checkpoint', viaLink, '--out', join(dir, 'linked-b.ndjson')]);
    expect(ran.code).toBe(0);
    // Saved through the link into the file: the link is still one, and both names hold the position.
    expect((await lstat(viaLink)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(real, 'utf8'))).toHaveProperty('orders-sync');
  });

  it('orders sync writes through a link whose file is not there yet, for --out and --checkpoint, and keeps the link', async () => {
    await mkdir(join(dir, 'exports'), { recursive: true });
    const out = join(dir, 'latest.ndjson');
    const checkpoint = join(dir, 'latest.checkpoint.json');
    await symlink('exports/today.ndjson', out); // relative, as `ln -s` is mostly used
    await symlink(join(dir, 'exports', 'today.checkpoint.json'), checkpoint);
    // Whole-file mode (no checkpoint) replaces the file at the end; with a checkpoint the position is saved as it goes.
    const whole = await run(['orders', 'sync', '--out', out]);
    expect(whole.code).toBe(0);
    expect((await lstat(out)).isSymbolicLink()).toBe(true);
    expect((await readFile(join(dir, 'exports', 'today.ndjson'), 'utf8')).trim().split('\n').length).toBeGreaterThanOrEqual(480);
    await rm(join(dir, 'exports', 'today.ndjson'));
    const resumable = await run(['orders', 'sync', '--out', out, '--checkpoint', checkpoint]);
    expect(resumable.code).toBe(0);
    expect((await lstat(checkpoint)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'exports', 'today.checkpoint.json'), 'utf8'))).toHaveProperty('orders-sync');
  });

  it('refuses to resume a checkpoint file with other filters, naming the file (exit 2)', async () => {
    const checkpoint = join(dir, 'filtered.json');
    expect((await run(['orders', 'sync', '--status', 'processing', '--checkpoint', checkpoint])).code).toBe(0);
    const result = await run(['orders', 'sync', '--status', 'pending', '--checkpoint', checkpoint]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${checkpoint} holds the position of a sync with other filters`);
    expect(result.stderr).toContain('Use another --checkpoint FILE');
    expect(result.stderr).toMatch(/^paywidget orders sync: [\s\S]*Run 'paywidget orders sync --help'/);
  });

  it('refuses to resume a checkpoint file saved by a sync of another COMMERCE_URL, naming both (exit 2)', async () => {
    const checkpoint = join(dir, 'other-platform.json');
    expect((await run(['orders', 'sync', '--checkpoint', checkpoint])).code).toBe(0);
    const elsewhere = sb.commerceUrl.replace('127.0.0.1', 'localhost');
    const result = await run(['orders', 'sync', '--checkpoint', checkpoint], { env: { ...env(), COMMERCE_URL: elsewhere } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${checkpoint} holds the position of a sync of ${sb.commerceUrl}, not of COMMERCE_URL ${elsewhere}; resuming it would skip this platform's orders.`);
  });

  it('resumes a checkpoint whatever the order of its --status flags (a set of statuses)', async () => {
    const checkpoint = join(dir, 'statuses.json');
    expect((await run(['orders', 'sync', '--status', 'pending', '--status', 'processing', '--checkpoint', checkpoint])).code).toBe(0);
    const again = await run(['orders', 'sync', '--status', 'processing', '--status', 'pending', '--status', 'pending', '--checkpoint', checkpoint]);
    expect(again.stderr).toMatch(/^Synced \d+ orders/);
    expect(again.code).toBe(0);
  });

  it('resumes a checkpoint of one --status when that --status is repeated', async () => {
    const checkpoint = join(dir, 'one-status.json');
    expect((await run(['orders', 'sync', '--status', 'pending', '--checkpoint', checkpoint])).code).toBe(0);
    const again = await run(['orders', 'sync', '--status', 'pending', '--status', 'pending', '--checkpoint', checkpoint]);
    expect(again.stderr).toMatch(/^Synced \d+ orders/);
    expect(again.code).toBe(0);
  });

  it('reports a damaged position in a checkpoint file as such, not as other filters (exit 1)', async () => {
    const checkpoint = join(dir, 'damaged.json');
    await import('node:fs/promises').then((fs) => fs.writeFile(checkpoint, '{"orders-sync":"garbage"}'));
    const result = await run(['orders', 'sync', '--checkpoint', checkpoint]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The checkpoint file ${checkpoint} holds a position paywidget did not write`);
    expect(result.stderr).not.toMatch(/other filters/);
  });

  it('refuses a checkpoint file it did not write', async () => {
    const checkpoint = join(dir, 'junk.json');
    await writeFile(checkpoint, '[1,2]');
    const result = await run(['orders', 'sync', '--checkpoint', checkpoint]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/not a checkpoint file written by paywidget/);
    expect(result.stderr).not.toMatch(/unexpected error/);
    // A position that is not the text paywidget writes (edited by hand to a number) is not ignored: starting over would rewrite every order.
    await writeFile(checkpoint, '{ "orders-sync": 250 }');
    const edited = await run(['orders', 'sync', '--checkpoint', checkpoint]);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toMatch(/not a checkpoint file written by paywidget/);
    expect(edited.stdout).toBe('');
    // A directory is no checkpoint file either: the same kind of message, naming the option.
    const unreadable = await run(['orders', 'sync', '--checkpoint', dir]);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toMatch(/checkpoint file .* cannot be read \(EISDIR.*check --checkpoint/);
  });

  it('refuses --out naming the checkpoint file or its lock, by any path or link (exit 2), and leaves the position as saved', async () => {
    const checkpoint = join(dir, 'same.json');
    const first = await run(['orders', 'sync', '--checkpoint', checkpoint, '--status', 'complete']);
    expect(first.code).toBe(0);
    const saved = await readFile(checkpoint, 'utf8');
    await link(checkpoint, join(dir, 'same-link.json'));
    for (const out of [checkpoint, join(dir, '.', 'same.json'), join(dir, 'same-link.json'), `${checkpoint}.lock`]) {
      const result = await run(['orders', 'sync', '--checkpoint', checkpoint, '--status', 'complete', '--out', out]);
      expect([out, result.code, result.stdout]).toEqual([out, 2, '']);
      expect(result.stderr).toMatch(/--out names the checkpoint( file|'s lock): the orders would be written over the saved position/);
    }
    expect(await readFile(checkpoint, 'utf8')).toBe(saved);
    // A link to a checkpoint not written yet (or to its lock) is no file to compare: it is refused by where it leads.
    const fresh = join(dir, 'fresh.json');
    await symlink(fresh, join(dir, 'to-fresh.json'));
    await symlink(`${fresh}.lock`, join(dir, 'to-fresh-lock'));
    for (const out of [join(dir, 'to-fresh.json'), join(dir, 'to-fresh-lock')]) {
      const result = await run(['orders', 'sync', '--checkpoint', fresh, '--out', out]);
      expect([out, result.code]).toEqual([out, 2]);
    }
  });

  it('escapes the terminal controls of a message that quotes the platform (Magento\'s words), keeping its text', async () => {
    const body = JSON.stringify({ message: 'bad \u001b[2J\u001b[31mcleared %1', parameters: ['\u001b]0;title\u0007'] });
    const fault = sb.commerce.faults.inject({ route: 'GET /rest/default/V1/orders/:id', status: 400, headers: { 'content-type': 'application/json' }, body });
    const result = await run(['orders', 'get', '1']);
    sb.commerce.faults.remove(fault);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('bad \\u001b[2J\\u001b[31mcleared \\u001b]0;title\\u0007');
    expect(result.stderr.includes('\u001b') || result.stderr.includes('\u0007')).toBe(false);
  });

  it('says so when the checkpoint\'s directory does not exist, instead of an unexpected error about its lock', async () => {
    const missing = join(dir, 'no-such-dir', 'c.json');
    const result = await run(['orders', 'sync', '--checkpoint', missing]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`The checkpoint file ${missing} cannot be locked (ENOENT: the directory ${join(dir, 'no-such-dir')} does not exist)`);
    expect(result.stderr).toContain('Check --checkpoint: its directory must exist and be writable.');
    expect(result.stderr).not.toMatch(/unexpected error|\.lock\.[0-9a-f-]{36}/);
    expect(result.stdout).toBe('');
  });
});

describe('paywidget as a process', () => {
  const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
  const exec = (args: string[]) => new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', cli, ...args], { env: { ...process.env, ...env(), PAYWIDGET_STATE_DIR: join(dir, 'process-state') } }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });

  it('leaves at Ctrl-C while its --out FIFO has no reader yet (exit 130), though opening it waits for one', async () => {
    const fifo = join(dir, 'process-unread.fifo');
    const checkpoint = join(dir, 'process-unread.checkpoint.json');
    await promisify(execFile)('mkfifo', [fifo]);
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'orders', 'sync', '--checkpoint', checkpoint, '--out', fifo], { env: { ...process.env, ...env() }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // started, its first page read, waiting for a reader
      child.kill('SIGINT');
      const ended = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000, 'still running'))]);
      // Interrupted while waiting for the reader (or, on a slow machine, before its first order): either way, at once.
      expect([ended, stderr]).toEqual([[130, null], expect.stringMatching(/interrupted\.|Stopped after 0 orders/)]);
      await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/);
    } finally {
      // A reader that does not wait for a writer, so that a run still waiting ends (and this test does not wait either).
      const reader = await open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
      child.kill('SIGKILL');
      await exited;
      await reader.close();
    }
  });

  it('leaves at Ctrl-C though the reader of its --out FIFO reads nothing (less, not scrolled), no position written', async () => {
    const fifo = join(dir, 'process-stalled.fifo');
    const checkpoint = join(dir, 'process-stalled.checkpoint.json');
    await promisify(execFile)('mkfifo', [fifo]);
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'orders', 'sync', '--checkpoint', checkpoint, '--out', fifo, '--page-size', '50'], { env: { ...process.env, ...env() }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    const reader = await open(fifo, 'r'); // opened once the run opens its end, then never read: the pipe fills
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      child.kill('SIGINT');
      const ended = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000, 'still running'))]);
      expect([ended, stderr]).toEqual([[130, null], expect.stringMatching(/^Stopped after \d+ orders\. The checkpoint is left where this run started/)]);
      await expect(readFile(checkpoint, 'utf8')).rejects.toThrow(/ENOENT/);
    } finally {
      await reader.close(); // a run still blocked on it fails to write (EPIPE), and ends
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('finishes with exit 0 when the reader of its stderr went away (no crash on EPIPE)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'orders', 'sync', '--to', '2000-01-01'], { env: { ...process.env, ...env() }, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.destroy(); // the summary line it writes at the end meets a closed pipe
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(0);
  });

  it('writes --out /dev/stdout into the pipe it is (a tool that insists on a file name, bash\'s >(gzip) alike)', async () => {
    // Through the shell, so that stdout is a pipe (Node gives a child a socket, which /dev/stdout cannot open).
    const quoted = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;
    const command = `${quoted(process.execPath)} --import tsx ${quoted(cli)} orders sync --status complete --out /dev/stdout | cat`;
    const result = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile('sh', ['-c', command], { env: { ...process.env, ...env(), PAYWIDGET_STATE_DIR: join(dir, 'process-state') } }, (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr })));
    });
    expect(result.stderr).toContain('Synced');
    const complete = range(1, sb.commerce.orderCount).filter((id) => sb.commerce.order(id)!.status === 'complete');
    expect(lines(result.stdout).map((order) => order.entity_id)).toEqual(complete);
  });

  it('prints an order, syncs NDJSON, and exits 2 on bad usage', async () => {
    const [get, sync, bad] = await Promise.all([exec(['orders', 'get', '5']), exec(['orders', 'sync', '--status', 'processing']), exec(['orders', 'get', 'five'])]);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toEqual(sb.commerce.order(5));
    expect(sync.code).toBe(0);
    const processing = range(1, sb.commerce.orderCount).filter((id) => sb.commerce.order(id)!.status === 'processing');
    expect(processing.length).toBeGreaterThan(0);
    expect(lines(sync.stdout).map((o) => o.entity_id)).toEqual(processing);
    expect(sync.stderr).toContain(`Synced ${processing.length} orders`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/expected one order entity_id/);
  });

  it('syncs on Node 20.0 to 20.2, which package.json\'s engines takes and which have no AbortSignal.any', async () => {
    const withoutAny = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'data:text/javascript,delete AbortSignal.any', '--import', 'tsx', cli, 'orders', 'sync', '--status', 'complete'], { env: { ...process.env, ...env(), PAYWIDGET_STATE_DIR: join(dir, 'process-state') } }, (error, stdout, stderr) => {
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      });
    });
    expect(withoutAny.stderr).not.toContain('unexpected error');
    expect(withoutAny.code).toBe(0);
    const complete = range(1, sb.commerce.orderCount).filter((id) => sb.commerce.order(id)!.status === 'complete');
    expect(lines(withoutAny.stdout).map((o) => o.entity_id)).toEqual(complete);
  });

  it('syncs into a file that stdout was redirected to, putting it on disk before each checkpoint, and resumes', async () => {
    // stdout is then a file, which the CLI fdatasyncs before moving the checkpoint (a pipe, above, cannot be).
    const out = join(dir, 'redirected.ndjson');
    const checkpoint = join(dir, 'redirected.checkpoint.json');
    const syncInto = async (flags: string) => {
      const file = await open(out, flags);
      try {
        return await new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--import', 'tsx', cli, 'orders', 'sync', '--checkpoint', checkpoint, '--page-size', '50'], { env: { ...process.env, ...env() }, stdio: ['ignore', file.fd, 'ignore'] });
          child.on('exit', resolve);
        });
      } finally {
        await file.close();
      }
    };
    const count = sb.commerce.orderCount;
    expect(await syncInto('w')).toBe(0);
    expect(lines(await readFile(out, 'utf8')).map((o) => o.entity_id)).toEqual(range(1, count));
    const saved = JSON.parse(JSON.parse(await readFile(checkpoint, 'utf8'))['orders-sync']) as { lastEntityId: number; complete: boolean };
    expect(saved.complete).toBe(true);
    // The generated orders are old; one an earlier test added just now may be held back (settleMs) and written again.
    expect(saved.lastEntityId).toBeGreaterThanOrEqual(480);

    sb.commerce.addOrder();
    expect(await syncInto('a')).toBe(0);
    const ids = lines(await readFile(out, 'utf8')).map((o) => o.entity_id);
    expect([...new Set(ids)]).toEqual(range(1, count + 1));
    expect(ids.slice(0, saved.lastEntityId)).toEqual(range(1, saved.lastEntityId));
  });

  it('stops at once on Ctrl-C during its first login (exit 130), not when the login answers', async () => {
    const slow = sb.commerce.faults.inject({ route: 'POST /rest/default/V1/integration/admin/token', latencyMs: 60_000 });
    const child = execFile(process.execPath, ['--import', 'tsx', cli, 'orders', 'sync'], { env: { ...process.env, ...env() } });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The fault is used up when the login request arrives: from then on the process waits for it.
    const deadline = Date.now() + 15_000;
    while (sb.commerce.faults.list().some((fault) => fault.id === slow)) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the login request to reach the platform');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const interrupted = performance.now();
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    // Not a speed check: a login request left open would keep the process alive until it answers (60 s).
    // Exiting takes well under a second; 10 s is far above that and far below the latency.
    expect(performance.now() - interrupted).toBeLessThan(10_000);
    expect(stderr).toMatch(/Stopped after 0 orders/);
  });
});
