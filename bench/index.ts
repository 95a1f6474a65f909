/** `npm run bench`: runs every benchmark and prints its figures. */
import { benchIngest } from "./ingest.js";
import { benchDetectionLatency } from "./latency.js";
import { machine, stopDynamo } from "./support.js";

console.log(`Lookout benchmarks — ${new Date().toISOString().slice(0, 10)} — ${machine()}`);
try {
  await benchIngest();
  await benchDetectionLatency();
} finally {
  await stopDynamo();
}
