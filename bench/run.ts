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
const unknown = chosen.filter((name) => !(name in benches));
if (unknown.length > 0) throw new Error(`no benchmark named ${unknown.join(', ')}; the benchmarks are ${Object.keys(benches).join(', ')}`);
// One that fails (no redis-server here, say) is reported, and the others still run; the exit code says so.
let failed = 0;
for (const [name, bench] of Object.entries(benches)) {
  if (chosen.length > 0 && !chosen.includes(name)) continue;
  try {
    await bench();
  } catch (error) {
    failed += 1;
    console.error(`\nThe ${name} benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
if (failed > 0) process.exitCode = 1;
