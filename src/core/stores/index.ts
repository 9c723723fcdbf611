import type { AdminTokenStore } from './admin-token-store.js';
import type { CheckpointStore } from './checkpoint-store.js';
import type { ClaimStore } from './claim-store.js';
import type { LedgerStore } from './ledger-store.js';

export type { ClaimStore, ClaimResult } from './claim-store.js';
export { MemoryClaimStore, type MemoryClaimStoreOptions } from './memory-claim-store.js';
export { MemoryCheckpointStore, type CheckpointStore, type MemoryCheckpointStoreOptions } from './checkpoint-store.js';
export { MemoryAdminTokenStore, type AdminTokenStore, type MemoryAdminTokenStoreOptions } from './admin-token-store.js';
export { OUTCOME_RANK, applyObservation, isForgettable, type ForgetCondition, type LedgerStore, type LedgerEntry, type LedgerObservation, type LedgerOutcome, type LedgerQuery, type LedgerRecordResult, type LedgerSource } from './ledger-store.js';
export { MemoryLedgerStore, type MemoryLedgerStoreOptions } from './memory-ledger-store.js';

/** Where state shared between requests lives; in memory by default. */
export interface StoreOptions {
  /** Claims for webhook deduplication and the replay guard. */
  claims?: ClaimStore | undefined;
  /** Positions of `pay.orders.sync()` runs, by checkpoint name. */
  checkpoints?: CheckpointStore | undefined;
  /** The commerce platform's admin token, shared by the instances that use the same store. */
  adminTokens?: AdminTokenStore | undefined;
  /** The payment ledger (outcomes from polls and webhooks); share it across instances so a sweep or the CLI sees every payment. */
  ledger?: LedgerStore | undefined;
}
