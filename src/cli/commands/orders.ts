import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createOrders, type Orders } from '../../core/commerce/index.js';
import { ENTITY_ID_TEXT, ZERO_PADDED } from '../../core/commerce/orders.js';
import { requireCommerce, resolveCommerceConfig } from '../../core/config.js';
import { MemoryCheckpointStore, type CheckpointStore } from '../../core/stores/checkpoint-store.js';
import { PayError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import { checkWindow, parseCliDate } from '../dates.js';
import { lockCheckpointFile } from '../checkpoint-lock.js';
import { FileCheckpointStore } from '../file-checkpoint-store.js';
import { HeldCheckpoints } from '../held-checkpoints.js';
import { commandGroup, EXIT, ExitError, parse, UsageError, wholeNumber, write, type CliIo, type Command, printHelp, warnOn } from '../io.js';
import { drained } from '../../core/drained.js';
import { isPipe, output, syncToDisk } from '../ndjson-output.js';
import { ProgressBar } from '../progress.js';
import { resolveLinks } from '../resolve-links.js';
import { sharedStores } from '../shared-stores.js';

const ENVIRONMENT = `Environment:
  COMMERCE_URL        the platform's base URL, e.g. https://shop.example.com
  COMMERCE_USERNAME   an admin user allowed to read orders
  COMMERCE_PASSWORD   its password (never printed)
  COMMERCE_SCOPE      store code in the path (default: default)
  COMMERCE_READ_METHOD  GET (default) or POST, for installations that read orders with POST
  REDIS_URL           share the admin token, and refused logins, with your servers (redisStores, through ioredis: npm install ioredis)
  PAYWIDGET_STATE_DIR without REDIS_URL, where refused logins are remembered between runs, so a
                      cron job never locks the account (default $XDG_STATE_HOME/paywidget, or ~/.local/state/paywidget)`;

/** The checkpoint name the CLI keeps its position under, inside the --checkpoint file. */
export const SYNC_CHECKPOINT = 'orders-sync';

/**
 * Runs `use` with the orders client from the COMMERCE_* variables alone (the CLI needs no payment
 * settings), its admin token shared as sharedStores says, so refused logins are remembered across runs.
 */
async function withOrders<T>(io: CliIo, checkpoints: CheckpointStore | undefined, use: (orders: Orders) => Promise<T>): Promise<T> {
  const config = resolveCommerceConfig({ env: io.env });
  const commerce = requireCommerce(config);
  const shared = await sharedStores(io.env, warnOn(io));
  try {
    return await use(createOrders(commerce, { http: config.http, logger: silentLogger, stores: { checkpoints, adminTokens: shared.stores?.adminTokens } }));
  } finally {
    await shared.close();
  }
}

const get: Command = {
  name: 'get',
  summary: 'print one order as JSON',
  help: `Usage: paywidget orders get <entity_id>

Prints the order with this entity_id (the number in the order's QR code) as JSON on stdout.
Exit code 1 when the order does not exist or the platform cannot be read.

${ENVIRONMENT}`,
  async run(args, io, path) {
    const { values, positionals } = parse(path, args, {}, true);
    if (values.help) return printHelp(io, this);
    // The core's own rule (1 to 15 digits, no leading zero), checked here so that a bad id is a usage error (exit 2).
    const [id] = positionals;
    if (positionals.length === 1 && ZERO_PADDED.test(id!)) {
      throw new UsageError(`'${id}' has a leading zero, as an increment_id has (the order number shoppers see); orders get takes the order's entity_id, a positive integer without leading zeros.`, path);
    }
    if (positionals.length !== 1 || !ENTITY_ID_TEXT.test(id!)) {
      throw new UsageError('expected one order entity_id (a positive integer of at most 15 digits).', path);
    }
    const order = await withOrders(io, undefined, (orders) => orders.get(id!, { signal: io.signal }));
    await write(io.stdout, `${JSON.stringify(order, null, 2)}\n`);
    return EXIT.ok;
  },
};

const sync: Command = {
  name: 'sync',
  summary: 'write every matching order as NDJSON, resumable',
  help: `Usage: paywidget orders sync [--status S] [--from T] [--to T] [--checkpoint FILE] [--out FILE] [--page-size N]

Writes every matching order, one JSON object per line, in entity_id order.

Options:
  --status S         only orders with this status (repeat for several: --status pending --status processing)
  --from T           created at or after T    T: 'YYYY-MM-DD HH:MM:SS' (UTC), 'YYYY-MM-DD', or ISO 8601 with a zone
  --to T             created at or before T   (a bare date means the end of that day)
  --checkpoint FILE  keep the position in FILE: a stopped or failed run continues where it left off,
                     and a finished one picks up orders created since (and again those of the last
                     minute before it ended, which the platform may still have been numbering). With
                     --status, it also picks up older orders updated since the last run began (one
                     that entered the status, say: a pending order paid since). One filter per FILE.
                     One run at a time per FILE (FILE.lock): another exits 75
  --out FILE         write to FILE instead of stdout (appended to when resuming from a checkpoint,
                     after cutting a last line a stopped run left unfinished; without --checkpoint,
                     replaced only once the run finishes, so a stopped or failed one leaves it as it was;
                     - is stdout)
  --page-size N      orders per request (default 100; lowered automatically to the platform's cap)
  -h, --help         this help

A progress bar is drawn on stderr when it is a terminal (and the orders do not go to it too). Ctrl-C stops after the current order and
saves the position (exit code 130). Into a pipe, the position is saved only when the run ends by itself
(finished, or stopped by a failing platform): what the reader had not read is lost with a stop (Ctrl-C, which
stops the reader too, a reader that goes away: | head, or a kill), so the run leaves the position where it
started, and the next run writes those orders again. Orders are delivered
at least once: after a crash, up to one page may be written again, and a run writes again the orders
of the previous run's last minute; key on entity_id when loading them. An output file (--out, or
stdout redirected to a file) is synced to disk before the checkpoint moves, so not even a power loss
makes the next run skip an order.

${ENVIRONMENT}`,
  async run(args, io, path) {
    const { values } = parse(path, args, {
      status: { type: 'string', multiple: true },
      from: { type: 'string' },
      to: { type: 'string' },
      checkpoint: { type: 'string' },
      out: { type: 'string' },
      'page-size': { type: 'string' },
    });
    if (values.help) return printHelp(io, this);
    const pageSize = wholeNumber(path, 'page-size', values['page-size'], 'a positive integer', 1);
    const bad = values.status?.find((s) => s.trim() !== s || s === '' || s.includes(','));
    if (bad !== undefined) throw new UsageError(`--status must be one status code such as 'pending' (got '${bad}'); repeat --status for several.`, path);
    const createdFrom = values.from === undefined ? undefined : parseCliDate(values.from, 'from', path);
    const createdTo = values.to === undefined ? undefined : parseCliDate(values.to, 'to', path);
    checkWindow(createdFrom, createdTo, path);
    // An empty name would sync and then fail to save (--checkpoint) or write to stdout (--out).
    for (const name of ['checkpoint', 'out'] as const) {
      if (values[name]?.trim() === '') throw new UsageError(`--${name} needs a file name.`, path);
    }
    // As for most tools, '-' is stdout (a file of that name is ./-).
    if (values.out === '-') delete values.out;

    // A link and the file it names are one checkpoint: one lock, and saves that replace the file, not the link.
    if (values.checkpoint !== undefined) values.checkpoint = await resolveLinks(values.checkpoint);

    if (values.out !== undefined && values.checkpoint !== undefined) {
      // Through its links too: a link to a checkpoint not written yet is no file stat() can compare.
      const out = await resolveLinks(values.out);
      for (const [taken, what] of [[values.checkpoint, 'the checkpoint file'], [`${values.checkpoint}.lock`, 'the checkpoint\'s lock']] as const) {
        if (out === taken || await sameFile(values.out, taken)) throw new UsageError(`--out names ${what}: the orders would be written over the saved position. Give --out a file of its own.`, path);
      }
    }

    const unlock = values.checkpoint === undefined ? undefined : await lockCheckpointFile(values.checkpoint);
    try {
      return await runSync(io, path, { status: values.status, createdFrom, createdTo, pageSize, checkpoint: values.checkpoint, out: values.out });
    } finally {
      await unlock?.();
    }
  },
};

/** Whether two names are one file: the same path, or (both there) the same inode, through a link. */
async function sameFile(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  const [x, y] = await Promise.all([stat(a).catch(() => undefined), stat(b).catch(() => undefined)]);
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

interface SyncArgs {
  status: string | string[] | undefined;
  createdFrom: string | undefined;
  createdTo: string | undefined;
  pageSize: number | undefined;
  checkpoint: string | undefined;
  out: string | undefined;
}

/** The sync itself, once the command line is checked and the checkpoint is ours. */
async function runSync(io: CliIo, path: string, values: SyncArgs): Promise<number> {
  const { status, createdFrom, createdTo, pageSize } = values;
  // Each save flushes the output first (flush, below): it opens the file, so a saved position always goes with the file it covers.
  const file = values.checkpoint === undefined ? undefined : new FileCheckpointStore(values.checkpoint, () => flush());
  /** The position this run starts from, put back when what it wrote may not have reached its reader. */
  const startedFrom = await file?.get(SYNC_CHECKPOINT);
  const resuming = startedFrom !== undefined;
  const toPipe = await isPipe(values.out ?? io.stdout);
  let failed: Error | undefined;
  const stopOnError = new AbortController();
  const out = output(io, values.out, { append: resuming, whole: values.checkpoint === undefined }, (error) => {
    failed ??= error;
    stopOnError.abort();
  });
  const flush = async () => {
    if (failed) throw failed;
    const stream = out.current ?? (await out.open());
    await write(stream, '');
    await syncToDisk(stream);
  };
  // Into a pipe, a position stands only once the run finished (see `unread` below): held until then, so that not even
  // a second Ctrl-C or a kill leaves one past what the reader read.
  const held = file !== undefined && toPipe ? new HeldCheckpoints(file) : undefined;
  const store = held ?? file ?? new MemoryCheckpointStore();
  // Not when the orders go to the same terminal: the bar's carriage returns would overwrite their lines.
  const bar = io.stderr.isTTY && (values.out !== undefined || !io.stdout.isTTY) ? new ProgressBar(io.stderr, 'orders') : undefined;
  // Ctrl-C stops the run too, with its own reason; linked by hand, as AbortSignal.any came in Node 20.3.
  const stopOnSignal = () => stopOnError.abort(io.signal!.reason);
  if (io.signal?.aborted) stopOnSignal();
  else io.signal?.addEventListener('abort', stopOnSignal, { once: true });
  const { signal } = stopOnError;
  let summary;
  try {
    summary = await withOrders(io, store, (orders) => orders.sync({
      checkpoint: SYNC_CHECKPOINT, status, createdFrom, createdTo, pageSize, signal,
      onOrder: async (order) => {
        if (failed) throw failed;
        const stream = out.current ?? (await out.open());
        // Not waited for past Ctrl-C: a reader that reads nothing (less, not scrolled) would hold the stop up.
        if (!stream.write(`${JSON.stringify(order)}\n`)) await drained(stream, signal);
        if (failed) throw failed;
      },
      onProgress: (p) => bar?.update(p.delivered, p.total, p.ratePerSecond),
    }));
    // No matching order: the file still says so, empty (or as it was, when resuming).
    if (summary.complete) {
      await out.open();
      await held?.commit();
    }
  } catch (error) {
    // The core names the checkpoint by its key, which the CLI sets itself: name the file instead.
    if (error instanceof PayError && error.details?.field === 'checkpoint') {
      if (error.details.reason === 'other_filter') {
        throw new UsageError(`${values.checkpoint} holds the position of a sync with other filters (--status, --from, --to); resuming it would skip orders. Use another --checkpoint FILE for these filters.`, path);
      }
      if (error.details.reason === 'other_source') {
        throw new UsageError(`${values.checkpoint} holds the position of a sync of ${String(error.details.source)}, not of COMMERCE_URL ${String(io.env.COMMERCE_URL)}; resuming it would skip this platform's orders. Use another --checkpoint FILE for this platform, or move this one away to sync it from the start.`, path);
      }
      throw new ExitError(`The checkpoint file ${values.checkpoint} holds a position paywidget did not write (it was edited or damaged); move it away or pass another --checkpoint.`, EXIT.failed);
    }
    if (!isBrokenPipe(failed)) {
      // The platform failed (or the position could not be saved), not the output, and no Ctrl-C stopped the reader: it
      // reads on what it was sent, so the position of what was delivered stands, as it does for a file.
      if (held !== undefined && failed === undefined && io.signal?.aborted !== true) await held.commit().catch(() => {});
      throw error;
    }
  } finally {
    io.signal?.removeEventListener('abort', stopOnSignal);
    bar?.finish();
    // A pipe stopped by Ctrl-C is not waited on to take what it was sent: its reader may never read again.
    const abandon = toPipe && summary?.complete !== true && io.signal?.aborted === true;
    await out.close(summary?.complete === true && !failed, abandon).catch((error: Error) => void (failed ??= error));
  }
  // What a pipe took, its reader may not have read: lost with a reader that went away, or one stopped with this run (Ctrl-C
  // reaches the whole pipeline). Its position must not stand, or the next run would skip those orders.
  const unread = isBrokenPipe(failed) || summary === undefined || (toPipe && !summary.complete);
  // Held back (into a pipe), a position was written only if the run finished: else the file is as the run found it.
  if (unread && file !== undefined && (held === undefined || held.committed)) await file.restore(SYNC_CHECKPOINT, startedFrom);
  const leftAtStart = values.checkpoint ? ' The checkpoint is left where this run started, since what the reader of the output did not read is lost with it: run the same command to continue (those orders are written again).' : '';
  if (isBrokenPipe(failed) || summary === undefined) {
    // `| head`: the reader had enough, but the sync did not finish, which a script (pipefail) must be able to tell.
    await write(io.stderr, `Stopped: the reader of the output went away.${leftAtStart}\n`).catch(() => {});
    return EXIT.interrupted;
  }
  if (failed) throw failed;
  bar?.update(summary.delivered, summary.total, summary.ratePerSecond, true);
  bar?.finish();
  const where = summary.position === undefined ? '' : `; position: entity_id ${summary.position}`;
  const rate = `${Math.round(summary.ratePerSecond).toLocaleString('en-US')}/s`;
  if (!summary.complete) {
    const next = unread ? leftAtStart : values.checkpoint ? ' Run the same command to continue.' : values.out ? ` --out ${values.out} is left as it was: without --checkpoint, only a run that finishes replaces it.` : '';
    await write(io.stderr, `Stopped after ${summary.delivered} orders${unread ? '' : where}.${next}\n`);
    return EXIT.interrupted;
  }
  await write(io.stderr, `Synced ${summary.delivered} orders in ${(summary.elapsedMs / 1000).toFixed(1)} s (${rate})${where}.\n`);
  return EXIT.ok;
}

function isBrokenPipe(error: Error | undefined): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';
}

export const ordersCommand = commandGroup('orders', 'read and sync the commerce platform\'s orders', [
  { usage: 'get <entity_id>', command: get },
  { usage: 'sync', command: sync },
]);
