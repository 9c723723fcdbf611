import { listsByUpdate, matchesQuery, type ForgetCondition, type LedgerEntry, type LedgerObservation, type LedgerOutcome, type LedgerQuery, type LedgerRecordResult, type LedgerSource, type LedgerStore } from '../../core/stores/ledger-store.js';
import { asString, pairsToObject, type RedisCommands } from './client.js';
import { HASHES, LEDGER_DAMAGED, LEDGER_FORGET, LEDGER_RECORD } from './scripts.js';

const OUTCOMES: readonly LedgerOutcome[] = ['unresolved', 'failed', 'confirmed'];
/** Tries of a forget whose entry's order id changes under it before it is taken as one that cannot be matched. */
const MAX_FORGET_ATTEMPTS = 5;
/** Entries read per round trip while listing. */
const PAGE = 200;

const optional = (value: string | number | null | undefined) => (value === null || value === undefined ? '' : `=${value}`);

/** A multi-bulk reply (an array, or a Set from a RESP3 client) as strings. */
function strings(reply: unknown): string[] {
  const items = Array.isArray(reply) ? reply : reply instanceof Set ? [...reply] : [];
  return items.map((item: unknown) => asString(item) ?? '');
}

/** A ZRANGEBYSCORE … WITHSCORES reply as ids and the last score: flat in RESP2, a pair per entry in RESP3 (node-redis 5). */
function scoredIds(reply: unknown): { ids: string[]; lastScore: string | undefined } {
  const items: unknown[] = Array.isArray(reply) ? reply : [];
  const flat = Array.isArray(items[0]) ? items.flat() : items;
  const ids: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) ids.push(asString(flat[i]) ?? '');
  return { ids, lastScore: asString(flat.at(-1)) };
}

/** The entry of the hash at `key`; undefined when there is none. One edited by hand is refused, never read as absent (the mint guard would then charge again). */
function toEntry(key: string, fields: Record<string, string>): LedgerEntry | undefined {
  if (Object.keys(fields).length === 0) return undefined;
  if (fields.paymentId === undefined || !OUTCOMES.includes(fields.outcome as LedgerOutcome) || !Number.isFinite(Number(fields.firstSeenAt)) || !Number.isFinite(Number(fields.updatedAt))) {
    throw new Error(`ERR ${key}${LEDGER_DAMAGED}`);
  }
  const entry: LedgerEntry = {
    paymentId: fields.paymentId,
    status: fields.status ?? null,
    outcome: fields.outcome as LedgerOutcome,
    source: fields.source as LedgerSource,
    firstSeenAt: Number(fields.firstSeenAt),
    updatedAt: Number(fields.updatedAt),
  };
  if (fields.orderId !== undefined) entry.orderId = fields.orderId;
  if (fields.amount !== undefined) entry.amount = Number(fields.amount);
  if (fields.currency !== undefined) entry.currency = fields.currency;
  return entry;
}

/**
 * The payment ledger in Redis: one hash per payment (`<prefix>ledger:pay:<id>`), two sorted sets per
 * outcome, scored by firstSeenAt (`<prefix>ledger:outcome:<outcome>`) and by updatedAt
 * (`<prefix>ledger:updated:<outcome>`), and a set per order
 * (`<prefix>ledger:order:<orderId>`). `record` is one Lua script applying the never-backwards rule,
 * `forget` another. Entries are kept until forgotten (pay.payments.pruneLedger).
 */
export class RedisLedgerStore implements LedgerStore {
  readonly #redis: RedisCommands;
  readonly #prefix: string;

  constructor(redis: RedisCommands, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}ledger:`;
  }

  async get(paymentId: string): Promise<LedgerEntry | undefined> {
    return (await this.#entries([paymentId]))[0];
  }

  async record(observation: LedgerObservation): Promise<LedgerRecordResult> {
    const { paymentId, status, outcome, source, at, orderId, amount, currency } = observation;
    const keys = this.#entryKeys(paymentId);
    if (orderId !== undefined) keys.push(this.#order(orderId));
    const reply = await this.#redis.script(LEDGER_RECORD, keys, [paymentId, outcome, source, String(at), optional(status), optional(orderId), optional(amount), optional(currency)]);
    const [before, after, changed] = reply as [unknown, unknown, unknown];
    const key = this.#payment(paymentId);
    const entry = toEntry(key, pairsToObject(after));
    if (!entry) throw new Error(`the ledger script answered no entry for payment ${paymentId}`);
    return { entry, previous: toEntry(key, pairsToObject(before)), changed: Number(changed) === 1 };
  }

  async *list(query: LedgerQuery): AsyncIterable<LedgerEntry> {
    // One index answers the range; the other bound, if any, is checked on the entries read.
    const [set, from, to] = listsByUpdate(query)
      ? [this.#updated(query.outcome), query.updatedFrom, query.updatedTo]
      : [this.#outcome(query.outcome), query.firstSeenFrom, query.firstSeenTo];
    const upTo = to === undefined ? '+inf' : String(to);
    // A page of the index at a time, from the score after the last page's, so each command costs the
    // page and not the backlog (a year's ledger, pruned for the first time). An entry moves on in its
    // index only (updatedAt never goes back): behind the walk it may come again, ahead of it it comes once.
    for (let after = from === undefined ? '-inf' : String(from); ;) {
      const { ids, lastScore: last } = scoredIds(await this.#redis.command(['ZRANGEBYSCORE', set, after, upTo, 'WITHSCORES', 'LIMIT', '0', String(PAGE)]));
      if (ids.length === 0 || last === undefined) return;
      const full = ids.length === PAGE;
      if (full) {
        // Entries recorded in one millisecond share a score: the rest of the last score's come now, all of them.
        const onPage = new Set(ids);
        for (const id of strings(await this.#redis.command(['ZRANGEBYSCORE', set, last, last]))) if (!onPage.has(id)) ids.push(id);
        after = `(${last}`;
      }
      for (let i = 0; i < ids.length; i += PAGE) {
        // Each entry as it is now: one that left the outcome meanwhile (a webhook confirmed it) is left out.
        for (const entry of await this.#entries(ids.slice(i, i + PAGE))) {
          if (entry && matchesQuery(entry, query)) yield entry;
        }
      }
      if (!full) return;
    }
  }

  async byOrder(orderId: string): Promise<LedgerEntry[]> {
    const ids = strings(await this.#redis.command(['SMEMBERS', this.#order(orderId)]));
    return (await this.#entries(ids)).filter((entry): entry is LedgerEntry => entry !== undefined);
  }

  async forget(paymentId: string, condition: ForgetCondition): Promise<boolean> {
    const keys = this.#entryKeys(paymentId);
    const updatedTo = condition.kind === 'settled' ? String(condition.updatedTo) : '0';
    // The order's set is a key of its own, so the script is told which order the entry had when read;
    // it answers the order id instead when one was filled in meanwhile, and runs again with that set.
    let orderId = asString(await this.#redis.command(['HGET', this.#payment(paymentId), 'orderId']));
    // An order id that changes between every read would be a webhook a round trip; one that never matches
    // is bytes that do not read back as written (not UTF-8), which would loop for ever.
    for (let attempt = 0; attempt < MAX_FORGET_ATTEMPTS; attempt++) {
      const reply = await this.#redis.script(LEDGER_FORGET, orderId === undefined ? keys : [...keys, this.#order(orderId)], [paymentId, condition.kind, updatedTo, optional(orderId)]);
      const answer = asString(reply);
      if (answer === 'no-order') orderId = undefined;
      else if (answer?.startsWith('order:')) orderId = answer.slice('order:'.length);
      else return Number(reply) === 1;
    }
    throw new Error(`ERR ${this.#payment(paymentId)} holds an order id that does not read back as it was written (bytes that are not UTF-8, written by another tool): set its orderId field to the order's id as text, or delete the key.`);
  }

  async #entries(ids: readonly string[]): Promise<Array<LedgerEntry | undefined>> {
    if (ids.length === 0) return [];
    const keys = ids.map((id) => this.#payment(id));
    const hashes = (await this.#redis.script(HASHES, keys, [])) as unknown[];
    return hashes.map((hash, i) => toEntry(keys[i]!, pairsToObject(hash)));
  }

  /** The keys both ledger scripts start with: the payment's hash, then the outcome sets by first seen and by last change. */
  #entryKeys(paymentId: string): string[] {
    return [this.#payment(paymentId), ...OUTCOMES.map((o) => this.#outcome(o)), ...OUTCOMES.map((o) => this.#updated(o))];
  }

  #payment(id: string): string {
    return `${this.#prefix}pay:${id}`;
  }

  #outcome(outcome: LedgerOutcome): string {
    return `${this.#prefix}outcome:${outcome}`;
  }

  #updated(outcome: LedgerOutcome): string {
    return `${this.#prefix}updated:${outcome}`;
  }

  #order(orderId: string): string {
    return `${this.#prefix}order:${orderId}`;
  }
}
