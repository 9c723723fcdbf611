import { Script } from './client.js';

/**
 * The Lua scripts of the Redis stores. Each runs atomically on the server; each declares every key
 * it touches (KEYS), so a prefix with a hash tag (`{paywidget}:`) keeps them usable on a Cluster.
 */

/**
 * A write Redis never refuses for memory, made before a SET that must land once the work ran (a done
 * mark, a lease renewal): past maxmemory (the `noeviction` the README asks for), Redis refuses a script's
 * first write that may grow memory, but lets a script that has written go on, since it cannot stop one
 * half-way. Without it, a full Redis would keep an event's lease instead of its done mark after its
 * handlers ran, and run them again for a duplicate once memory is freed. The SET replaces the expiry.
 */
const WRITE_FIRST = `redis.call('PEXPIRE', KEYS[1], ARGV[3])`;

/**
 * Claim: `SET key token NX PX lease`. 1 claimed; 2 the key is done; 0 someone holds it; 3 a value
 * that is neither, with no expiry: no instance wrote it (every lease expires), and it would hold the
 * event as in progress for ever. The key holding our own token is ours too: a client that resends a
 * command after a dropped connection (ioredis does by default) would otherwise find the claim its first
 * send took, and wait out a lease nobody holds. KEYS[1] key; ARGV[1] token, ARGV[2] lease (ms), ARGV[3] the done marker.
 */
export const CLAIM = new Script(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return 1 end
if held == ARGV[3] then return 2 end
if redis.call('PTTL', KEYS[1]) == -1 then return 3 end
return 0
`);

/**
 * Lock: `SET key token NX PX hold`, and ours when it holds our token already (a resent command, as for
 * CLAIM). 1 taken; 0 another holder has it. KEYS[1] key; ARGV[1] token, ARGV[2] hold (ms).
 */
export const TAKE_LOCK = new Script(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
return 0
`);

/**
 * Complete a claim: sets the done marker for the retention unless the key is done already. The work did
 * run, so this holds even over another attempt's lease (ours ran out): that attempt's complete or release
 * then finds it done, and no retry runs the work again. 1 set over our own lease or a free key; 2 set
 * over another's lease; 0 done already. KEYS[1] key; ARGV[1] our token, ARGV[2] the done marker,
 * ARGV[3] retention (ms).
 */
export const COMPLETE = new Script(`
local held = redis.call('GET', KEYS[1])
if held == ARGV[2] then return 0 end
${WRITE_FIRST}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
if held and held ~= ARGV[1] then return 2 end
return 1
`);

/**
 * Replace own: unless another token holds the key, sets it to a value for a time-to-live; a key that is
 * gone (its lease ran out, or Redis restarted without persistence) is set too. 1 set; 0 another holds it.
 * Renewing a claim or a sync lock sets our own token: a worker that stalled past its lease keeps it if nobody took it.
 * KEYS[1] key; ARGV[1] our token, ARGV[2] value, ARGV[3] time-to-live (ms).
 */
export const REPLACE_OWN = new Script(`
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
${WRITE_FIRST}
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`);

/**
 * Set while held: sets KEYS[1] to ARGV[1] only while the lock KEYS[2] holds our token ARGV[2], so a save
 * that reaches Redis late (a stalled connection) never overwrites the position of the run that took over.
 * 1 set; 0 the lock is another's, or gone.
 */
export const SET_WHILE_HELD = new Script(`
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
`);

/**
 * Release (claims, refresh and sync locks): deletes the key only while our token still holds it.
 * KEYS[1] key; ARGV[1] token.
 */
export const RELEASE = new Script(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
`);

/**
 * Bind: `SET key value NX PX ttl`, answering the value the key already held (nil when it was set now).
 * KEYS[1] key; ARGV[1] value, ARGV[2] ttl (ms).
 */
export const BIND = new Script(`
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false
`);

/** Every hash in KEYS, as field/value arrays (an empty array for a missing one). */
export const HASHES = new Script(`
local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('HGETALL', key) end
return out
`);

/** Completes "ERR <key>" when a ledger hash is not one the library wrote: what is wrong, and the fix. */
export const LEDGER_DAMAGED = ' holds a payment ledger entry paywidget-server did not write (paymentId, outcome, source, firstSeenAt or updatedAt is missing or wrong): restore those fields, or delete the key to let the next webhook or poll record the payment again.';

/**
 * The ledger's record rule (LedgerStore in src/core/stores/ledger-store.ts), applied atomically.
 * KEYS[1] the payment's hash; KEYS[2], KEYS[3], KEYS[4] the sorted sets of the unresolved, failed and
 * confirmed payments scored by firstSeenAt; KEYS[5], KEYS[6], KEYS[7] the same scored by updatedAt;
 * KEYS[8] the set of the observation's order, when it names one.
 * ARGV[1] paymentId, ARGV[2] outcome, ARGV[3] source, ARGV[4] at (ms);
 * ARGV[5] status, ARGV[6] orderId, ARGV[7] amount, ARGV[8] currency: '' when absent, else '=' .. value.
 * Answers { hash before, hash after, changed (1 / 0) }; a hash lacks the fields that have no value.
 */
export const LEDGER_RECORD = new Script(`
local rank = { unresolved = 0, failed = 1, confirmed = 2 }
local sets = { unresolved = KEYS[2], failed = KEYS[3], confirmed = KEYS[4] }
local updated = { unresolved = KEYS[5], failed = KEYS[6], confirmed = KEYS[7] }
local function opt(v) if v == '' then return nil end return string.sub(v, 2) end
local id, outcome, source, at = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local status, orderId, amount, currency = opt(ARGV[5]), opt(ARGV[6]), opt(ARGV[7]), opt(ARGV[8])
local before = redis.call('HGETALL', KEYS[1])

if #before == 0 then
  local fields = { 'paymentId', id, 'outcome', outcome, 'source', source, 'firstSeenAt', at, 'updatedAt', at }
  for _, pair in ipairs({ { 'status', status }, { 'orderId', orderId }, { 'amount', amount }, { 'currency', currency } }) do
    if pair[2] then fields[#fields + 1] = pair[1]; fields[#fields + 1] = pair[2] end
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('ZADD', sets[outcome], at, id)
  redis.call('ZADD', updated[outcome], at, id)
  if orderId then redis.call('SADD', KEYS[8], id) end
  return { before, fields, 1 }
end

local cur = {}
for i = 1, #before, 2 do cur[before[i]] = before[i + 1] end
local incoming, stored = rank[outcome], rank[cur.outcome]
-- A hash edited by hand would fail below as "compare nil with number", which names neither key nor fix.
if stored == nil or cur.paymentId == nil or tonumber(cur.updatedAt) == nil or tonumber(cur.firstSeenAt) == nil then
  return redis.error_reply('ERR ' .. KEYS[1] .. ${JSON.stringify(LEDGER_DAMAGED)})
end
local later = tonumber(at) >= tonumber(cur.updatedAt)
-- Any status outranks none (a poll that learned nothing), whenever it was seen, as in applyObservation.
local changed = incoming > stored or (incoming == 0 and stored == 0 and status ~= nil and status ~= cur.status and (cur.status == nil or later))
local set = {}
if changed then
  local updatedAt = later and at or cur.updatedAt
  if status then set[#set + 1] = 'status'; set[#set + 1] = status else redis.call('HDEL', KEYS[1], 'status') end
  set[#set + 1] = 'outcome'; set[#set + 1] = outcome
  set[#set + 1] = 'source'; set[#set + 1] = source
  set[#set + 1] = 'updatedAt'; set[#set + 1] = updatedAt
  if outcome ~= cur.outcome then
    redis.call('ZREM', sets[cur.outcome], id)
    redis.call('ZADD', sets[outcome], cur.firstSeenAt, id)
    redis.call('ZREM', updated[cur.outcome], id)
  end
  redis.call('ZADD', updated[outcome], updatedAt, id)
end
local filled = false
if cur.orderId == nil and orderId then
  set[#set + 1] = 'orderId'; set[#set + 1] = orderId
  redis.call('SADD', KEYS[8], id)
  filled = true
end
if cur.amount == nil and amount then set[#set + 1] = 'amount'; set[#set + 1] = amount; filled = true end
if cur.currency == nil and currency then set[#set + 1] = 'currency'; set[#set + 1] = currency; filled = true end
if filled and not changed and tonumber(at) > tonumber(cur.updatedAt) then
  set[#set + 1] = 'updatedAt'; set[#set + 1] = at
  redis.call('ZADD', updated[cur.outcome], at, id)
end
if #set > 0 then redis.call('HSET', KEYS[1], unpack(set)) end
return { before, redis.call('HGETALL', KEYS[1]), changed and 1 or 0 }
`);

/**
 * Removes a ledger entry if it meets `forget`'s condition (isForgettable in src/core/stores/ledger-store.ts).
 * KEYS as LEDGER_RECORD's, KEYS[8] the set of the order the caller read on the hash, if any.
 * ARGV: payment id, 'unknown' or 'settled', updatedTo, the order id the caller read ('' when none,
 * else '=' .. order id, as LEDGER_RECORD takes it). Answers 1 when it
 * removed the entry, 0 when the condition does not hold, or 'order:' .. its order id ('no-order' when
 * it has none) when that is not the order the caller read (the entry changed meanwhile): the caller
 * runs it again with that order's key.
 */
export const LEDGER_FORGET = new Script(`
local sets = { unresolved = KEYS[2], failed = KEYS[3], confirmed = KEYS[4] }
local updated = { unresolved = KEYS[5], failed = KEYS[6], confirmed = KEYS[7] }
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return 0 end
local cur = {}
for i = 1, #fields, 2 do cur[fields[i]] = fields[i + 1] end
if ARGV[2] == 'unknown' then
  if cur.status ~= nil then return 0 end
elseif cur.outcome == 'unresolved' or tonumber(cur.updatedAt) > tonumber(ARGV[3]) then
  return 0
end
if (cur.orderId and '=' .. cur.orderId or '') ~= ARGV[4] then return cur.orderId and 'order:' .. cur.orderId or 'no-order' end
redis.call('DEL', KEYS[1])
redis.call('ZREM', sets[cur.outcome], ARGV[1])
redis.call('ZREM', updated[cur.outcome], ARGV[1])
if cur.orderId then redis.call('SREM', KEYS[8], ARGV[1]) end
return 1
`);
