import { z } from 'zod';
import { isPending } from '../awaitable.js';
import { baseUrl } from '../config.js';
import { invalidInput, PayError } from '../errors.js';
import type { CheckpointStore } from '../stores/checkpoint-store.js';
import type { Logger } from '../types.js';
import type { OrderReader } from './orders.js';
import type { CommerceOrder } from './schemas.js';
import { lockCheckpoint, lostHold, type SyncLock } from './sync-lock.js';
import { normalizeFilter, statusSet, type NormalizedFilter, type OrderFilter } from './search.js';

/** What `onProgress` is told after each page. */
export interface OrderSyncProgress {
  /** Orders delivered to onOrder in this run. */
  delivered: number;
  /** Orders this run expects: the platform's count of matching orders after the resumed position. */
  total: number;
  /** Orders per second in this run so far. */
  ratePerSecond: number;
  /** Milliseconds since this run started. */
  elapsedMs: number;
  /** entity_id of the last order delivered; undefined before the first. */
  lastEntityId: number | undefined;
  /** The position saved for the next run: lastEntityId, held back before orders younger than settleMs. */
  position: number | undefined;
  /** The position this run resumed from, if any. */
  resumedFrom: number | undefined;
}

/** What `pay.orders.sync()` answers when the run ends. */
export interface OrderSyncSummary extends OrderSyncProgress {
  /** False when `signal` stopped the run early (the position is saved; run again to continue). */
  complete: boolean;
  /** Pages read from the platform. */
  pages: number;
}

/** Options of `pay.orders.sync()`: which orders (status, creation dates), where to keep the position, what to do with each. */
export interface OrderSyncOptions extends Omit<OrderFilter, 'afterEntityId'> {
  /** Name of the position in the checkpoint store; runs with the same name continue from each other, one at a time (an overlapping run is refused: SYNC_IN_PROGRESS). */
  checkpoint: string;
  /** Called once per order, in entity_id order; the next order waits for it. A throw stops the run (position kept). */
  onOrder: (order: CommerceOrder) => unknown;
  /** Called after each page with the counts so far. */
  onProgress?: ((progress: OrderSyncProgress) => void) | undefined;
  /** Orders per page (default 100; lowered automatically to a platform's cap). */
  pageSize?: number | undefined;
  /** Pages fetched ahead while the current one is delivered (default 6; 1 = one at a time). */
  prefetch?: number | undefined;
  /** Stops after the order being delivered; the position is saved and the summary says `complete: false`. */
  signal?: AbortSignal | undefined;
  /**
   * The saved position does not pass an order created less than this long ago (default 60 s; 0 turns it
   * off). Magento hands out entity_ids at insert, not at commit: a checkout that commits after a higher id
   * was read would lie behind the position for good. Orders this young are delivered again by the next run.
   */
  settleMs?: number | undefined;
}

const DEFAULT_SETTLE_MS = 60_000;
/** How far before its start a run by status reads changed orders from: clock differences with the platform, and late commits. */
const CHANGES_MARGIN_MS = 60_000;

/** `YYYY-MM-DD HH:MM:SS`, as the sync writes its times (created_at's form). */
const createdAtText = z.string().regex(/^-?\d{4,6}-\d\d-\d\d \d\d:\d\d:\d\d$/);
const entityId = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** What the checkpoint store holds: the position (an entity_id every order up to which was delivered), for this filter. */
const savedPositionSchema = z.object({
  v: z.literal(1),
  filter: z.object({ status: z.union([z.string(), z.array(z.string())]).optional(), createdFrom: z.string().optional(), createdTo: z.string().optional() }),
  /** The commerce URL the orders came from; absent in checkpoints saved before it was kept. */
  source: z.string().optional(),
  /** The position (named for what it was before settleMs existed; kept so saved checkpoints still read). */
  lastEntityId: entityId,
  /** Orders delivered under this checkpoint, over all runs. */
  delivered: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  complete: z.boolean(),
  updatedAt: z.string(),
  /**
   * A sync by status: when its run began (as updated_at is written, less a margin). The next run reads the
   * orders changed since then too, since an order enters a status (is paid, say) long after it was created.
   */
  startedAt: createdAtText.optional(),
  /** A sync by status: besides the orders after `lastEntityId`, the run reads these (newOrUpdated). */
  changes: z.object({ afterEntityId: entityId, updatedFrom: createdAtText }).optional(),
});
type SavedPosition = z.infer<typeof savedPositionSchema>;

/** The saved position, checked whole: a value edited or damaged is refused, never half-used (a string count would be concatenated). */
function readPosition(name: string, raw: string | undefined): SavedPosition | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = undefined;
  }
  const parsed = savedPositionSchema.safeParse(value);
  if (!parsed.success) {
    const where = parsed.error.issues[0]?.path.map(String).join('.');
    throw invalidInput('checkpoint', `Checkpoint '${name}' holds a value the order sync did not write${where ? ` (${where} is not what it writes)` : ''}; use another checkpoint name or clear it.`);
  }
  return parsed.data;
}

/** Statuses compared as sets: a position saved before normalizeFilter sorted them (or made one status a string) still resumes. */
type SavedFilter = SavedPosition['filter'];
const canonical = (filter: SavedFilter): SavedFilter => (Array.isArray(filter.status) ? { ...filter, status: statusSet(filter.status) } : filter);
const sameFilter = (a: SavedFilter, b: SavedFilter) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/**
 * Delivers every matching order to onOrder, in entity_id order, saving its position after each page:
 * the last order delivered, or the last one before the first order younger than settleMs. A run
 * resumes after that position (an extra `entity_id gt` filter), so a crash redelivers at most the
 * orders of one page (and the young ones), orders created during a run are picked up by the next,
 * and no run delivers an order twice.
 */
export async function syncOrders(reader: OrderReader, store: CheckpointStore, deps: { logger: Logger; now: () => number; source: string }, options: OrderSyncOptions): Promise<OrderSyncSummary> {
  const { logger } = deps;
  if (typeof options !== 'object' || options === null) throw invalidInput('options', 'orders.sync expects { checkpoint, onOrder, ... }.');
  const { checkpoint, onOrder, settleMs = DEFAULT_SETTLE_MS } = options;
  if (!Number.isFinite(settleMs) || settleMs < 0) throw invalidInput('settleMs', 'settleMs must be a number of milliseconds, 0 or more.');
  if (typeof checkpoint !== 'string' || checkpoint.trim() === '') throw invalidInput('checkpoint', 'checkpoint must be a non-empty name under which the sync keeps its position.');
  if (typeof onOrder !== 'function') throw invalidInput('onOrder', 'onOrder must be a function that receives each order.');
  const filter = normalizeFilter({ status: options.status, createdFrom: options.createdFrom, createdTo: options.createdTo });

  // Taken before the position is read: a second run must not start from the same one.
  const lock = await lockCheckpoint(store, checkpoint, logger);
  try {
    return await run(reader, { store, lock, logger, now: deps.now, filter, source: deps.source }, options);
  } finally {
    await lock.release();
  }
}

interface RunDeps {
  store: CheckpointStore;
  lock: SyncLock;
  logger: Logger;
  now: () => number;
  filter: NormalizedFilter;
  /** The commerce URL read from, kept with the position. */
  source: string;
}

/** The sync once its options are checked and its checkpoint is held. */
async function run(reader: OrderReader, deps: RunDeps, options: OrderSyncOptions): Promise<OrderSyncSummary> {
  const { store, lock, logger, filter, source } = deps;
  const { checkpoint, onOrder, onProgress, pageSize, prefetch, signal, settleMs = DEFAULT_SETTLE_MS } = options;
  /** The checkpoint's value as this run last read or wrote it. */
  let ours = await store.get(checkpoint);
  const saved = readPosition(checkpoint, ours);
  if (saved && !sameFilter(saved.filter, filter)) {
    throw new PayError('INVALID_INPUT', `Checkpoint '${checkpoint}' belongs to a sync with filter ${JSON.stringify(saved.filter)}, not ${JSON.stringify(filter)}: resuming it would skip orders. Use another checkpoint name for this filter.`, {
      details: { field: 'checkpoint', reason: 'other_filter' },
    });
  }
  // Another platform's entity_ids say nothing of this one's: resuming would skip its orders up to the position.
  if (saved?.source !== undefined && sameSource(saved.source) !== source) {
    throw new PayError('INVALID_INPUT', `Checkpoint '${checkpoint}' holds the position of a sync of ${saved.source}, not ${source}: resuming it would skip this platform's orders up to entity_id ${saved.lastEntityId}. Use another checkpoint name for this platform (or clear this one, to deliver its orders from the start).`, {
      details: { field: 'checkpoint', reason: 'other_source', source: saved.source },
    });
  }
  // By status, a finished run is followed by one that reads the new orders and those changed since it began
  // (any of them may have entered the status); a run stopped part-way resumes with what it was reading.
  const byStatus = filter.status !== undefined;
  const continuing = saved !== undefined && !saved.complete;
  const changes = !byStatus ? undefined
    : continuing ? saved.changes
    : saved?.startedAt !== undefined ? { afterEntityId: saved.lastEntityId, updatedFrom: saved.startedAt }
    : undefined; // first run, or finished before runs kept their start: everything in the status again
  const startedAt = !byStatus ? undefined : continuing ? saved.startedAt : asCreatedAt(deps.now() - Math.max(settleMs, CHANGES_MARGIN_MS));
  /** Every match up to this entity_id was delivered: the run reads after it. */
  const cursor = (!byStatus || continuing ? saved?.lastEntityId : undefined) || undefined;
  /** The saved position taken up: the cursor, or, for a run of changes, the one new orders follow. */
  const resumedFrom = cursor ?? (changes?.afterEntityId || undefined);
  const started = performance.now();
  let lastEntityId = cursor;
  let position = cursor;
  let savedId = cursor;
  /**
   * Orders created in this second or later may be too young to move the position past (see settleMs); none
   * is with settleMs 0. The platform keeps whole seconds: one stamped with the cutoff's second may have been
   * created after the cutoff within it, so it counts as young.
   */
  const settledBefore = settleMs > 0 ? asCreatedAt(deps.now() - settleMs) : undefined;
  /** Set at the first young order: ids ascend with creation, so the position stays before it for the run. */
  let heldBack = false;
  let delivered = 0;
  let total = 0;
  let pages = 0;
  let complete = true;

  const progress = (): OrderSyncProgress => {
    const elapsedMs = performance.now() - started;
    return { delivered, total, ratePerSecond: elapsedMs > 0 ? (delivered * 1000) / elapsedMs : 0, elapsedMs, lastEntityId, position, resumedFrom };
  };
  const save = async (done: boolean) => {
    const value: SavedPosition = {
      v: 1, filter, source, lastEntityId: position ?? 0, delivered: (saved?.delivered ?? 0) + delivered, complete: done, updatedAt: new Date().toISOString(),
      ...(startedAt !== undefined ? { startedAt } : {}), ...(changes !== undefined ? { changes } : {}),
    };
    await lock.confirm();
    // A renewal takes back a hold nobody holds, so it cannot tell that another run took the lapsed hold,
    // synced and freed it meanwhile; the position that run saved can. (Once renewed, no run can take it
    // between this read and the write.)
    if ((await store.get(checkpoint)) !== ours) throw lostHold(checkpoint);
    const text = JSON.stringify(value);
    await store.set(checkpoint, text);
    ours = text;
    savedId = position;
  };

  if (resumedFrom !== undefined) logger.info({ service: 'commerce', checkpoint, resumedFrom }, 'order sync resuming');
  /** False while a page is handled: an error then is onOrder's (or the save's), never a cancelled fetch. */
  let fetching = true;
  try {
    outer: for await (const page of reader.pages({ ...filter, afterEntityId: cursor, newOrUpdated: changes }, { pageSize, prefetch, signal })) {
      fetching = false;
      pages += 1;
      total = Math.max(page.totalCount, delivered + page.size);
      for (const order of page.orders()) {
        if (signal?.aborted) {
          complete = false;
          break outer;
        }
        const handled: unknown = onOrder(order);
        // A synchronous onOrder costs no microtask per order; anything thenable is awaited.
        if (isPending(handled)) await handled;
        lastEntityId = order.entity_id;
        delivered += 1;
        if (!heldBack && settledBefore !== undefined && order.created_at >= settledBefore) heldBack = true;
        if (!heldBack) position = order.entity_id;
      }
      await save(false);
      onProgress?.(progress());
      fetching = true;
    }
  } catch (error) {
    if (fetching && signal?.aborted) {
      complete = false; // the page in flight was cancelled: a stop, not a failure
    } else {
      // Keep what was delivered before the failure, so the next run does not repeat it.
      const lostToAnotherRun = error instanceof PayError && error.code === 'SYNC_IN_PROGRESS';
      if (position !== savedId && !lostToAnotherRun) await save(false).catch((e: unknown) => logger.error({ err: e, checkpoint }, 'could not save the order sync position'));
      // What the next run resumes after: the position saved last, whether or not the save above could add to it.
      logger.warn({ service: 'commerce', err: error, checkpoint, delivered, lastEntityId, resumesAfter: savedId }, 'order sync stopped by an error');
      throw error;
    }
  }
  // Every new order up to the previous position was read by the run before: a run of changes starts no lower.
  if (complete && changes !== undefined) position = Math.max(position ?? 0, changes.afterEntityId);
  // A run stopped with nothing new since its last save has nothing to add: stopped before its first order, it leaves
  // the checkpoint (and the CLI the --out file, which a save opens) as it found them.
  if (complete || position !== savedId) await save(complete);
  const summary = { ...progress(), complete, pages };
  logger.info({ service: 'commerce', checkpoint, delivered, total: summary.total, lastEntityId, position, complete }, 'order sync finished');
  return summary;
}

/**
 * A time written as created_at is (`YYYY-MM-DD HH:MM:SS`, UTC, required by the order schema), so that each
 * order is compared as text, without parsing its date. A time before the year 0 starts with '-', which
 * sorts before every created_at.
 */
function asCreatedAt(ms: number): string {
  return new Date(Math.max(ms, EARLIEST_DATE_MS)).toISOString().slice(0, 19).replace('T', ' ');
}
const EARLIEST_DATE_MS = -8.64e15;

/** A source as a checkpoint saved it, in the spelling the configuration now keeps (HTTP://Shop then, http://shop now). */
function sameSource(saved: string): string {
  try {
    return baseUrl(saved);
  } catch {
    return saved; // not a URL: compared as it is, and refused as another platform's
  }
}
