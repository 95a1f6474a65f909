/**
 * The hostile-input property at scale: the test suite runs a few hundred generated pages
 * (test/integration/poll/poll.hostile-property.test.ts); this runs 100,000 (BENCH_PROPERTY_RUNS) and reports how
 * many held, failing loudly on the first that does not.
 */
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { createPlatformClient } from "../lib/platform/client.js";
import { DynamoIngestStore } from "../lib/store/ingest-store.js";
import { startHostilePlatform } from "../test/support/hostile-platform.js";
import { pageCaseArb, runPageCase } from "../test/support/hostile-pages.js";
import { dynamo, report, section } from "./support.js";

const RUNS = Number(process.env.BENCH_PROPERTY_RUNS ?? 100_000);

export async function benchProperty(): Promise<void> {
  section({
    id: "property",
    title: `Hostile pages: the never-silent property over ${RUNS} generated cases`,
    method:
      "fast-check generates deployment history pages and webhook delivery lists of 1–5 records mixing genuine records with hostile " +
      "ones (a field at 3,000 or 70,000 characters, null, a number, control characters, odd timestamps, JSON nested 64 deep). Each " +
      "case is a fresh source read through the real poller over HTTP into DynamoDB Local: with the page (at first sight), then " +
      "again. It holds when every genuine failure raised exactly one alert, every read succeeded, every hostile record was stored or " +
      "quarantined, and the last read stored and raised nothing.",
  });
  const platform = await startHostilePlatform();
  try {
    const t = await dynamo();
    const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: 100 * 365 * 86_400_000 });
    const deps = {
      client: createPlatformClient({ baseUrl: platform.url, token: platform.token, auth: "token" as const, timeoutMs: 10_000 }),
      store, now: () => new Date(), backfillWindowMs: 15 * 60_000, log: { info() {}, warn() {}, error() {} },
    };
    const org = randomUUID();
    let cases = 0;
    const started = performance.now();
    const result = await fc.check(
      fc.asyncProperty(
        pageCaseArb,
        async ({ kind, slots }) => {
          // A line every 5,000 cases: the full run takes over an hour.
          if (++cases % 5000 === 0) console.log(`  property: ${cases} cases, ${(cases / ((performance.now() - started) / 1000)).toFixed(1)}/s`);
          const { problems } = await runPageCase(kind, slots, org, platform, deps);
          return problems.length === 0;
        },
      ),
      { numRuns: RUNS },
    );
    const method = "fast-check over the real poller, DynamoDB Local";
    report({ name: "cases run", value: cases, method });
    report({ name: "cases that broke the invariant", value: result.failed ? 1 : 0, method });
    report({ name: "cases per second", value: cases / ((performance.now() - started) / 1000), method: "wall clock, this machine" });
    if (result.failed) throw new Error(`the property broke (seed ${result.seed}): ${JSON.stringify(result.counterexample).slice(0, 500)}`);
  } finally {
    await platform.close();
  }
}
