/**
 * `npm run bench`: every benchmark, each figure printed next to its reference measured in the same
 * run, as a ratio. Pass names to run some: `npm run bench -- verify throughput redis orders`.
 */
import { benchOrderSync } from './order-sync.js';
import { benchRedis } from './redis.js';
import { benchWebhookThroughput } from './webhook-throughput.js';
import { benchWebhookVerify } from './webhook-verify.js';

const benches: Record<string, () => Promise<void>> = {
  verify: benchWebhookVerify,
  throughput: benchWebhookThroughput,
  redis: benchRedis,
  orders: benchOrderSync,
};

const chosen = process.argv.slice(2);
for (const [name, bench] of Object.entries(benches)) {
  if (chosen.length === 0 || chosen.includes(name)) await bench();
}
