import { MemoryCheckpointStore } from 'paywidget-server';
import { checkpointStoreContract } from './checkpoint-store-contract.js';

checkpointStoreContract('MemoryCheckpointStore', () => {
  let now = 1_700_000_000_000;
  return {
    store: new MemoryCheckpointStore({ now: () => now }),
    advance: async (ms: number) => {
      now += ms;
    },
  };
});
