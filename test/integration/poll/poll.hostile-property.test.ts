/**
 * The hostile-input property (DESIGN's "Never silent"): over generated pages that mix genuine and hostile
 * records, read through the real poller over HTTP into DynamoDB Local, every genuine failure is alerted
 * exactly once, every read succeeds, every hostile record is stored or quarantined, and reading the page
 * again adds nothing. 200 cases here (HOSTILE_RUNS sets more); `npm run bench -- property` runs 100,000.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import type { PollDeps } from "../../../lib/poll/poll.js";
import { startHostilePlatform, type HostilePlatform } from "../../support/hostile-platform.js";
import { pageCaseArb, runPageCase } from "../../support/hostile-pages.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

// 200 pages: every hostile value meets every field kind many times over (a page holds one to five
// records), at a fifth of CI's time for 1,000; the long form is the bench's (docs/testing.md).
const RUNS = Number(process.env.HOSTILE_RUNS ?? 200);
const ORG = randomUUID();
let platform: HostilePlatform;
let deps: PollDeps;

beforeAll(async () => {
  platform = await startHostilePlatform();
  const t = await freshTable("hostile-prop");
  const store = new DynamoIngestStore({ client: t.client, tableName: t.tableName, retentionMs: TEST_RETENTION_MS });
  deps = {
    client: createPlatformClient({ baseUrl: platform.url, token: platform.token, auth: "token", timeoutMs: 10_000 }),
    store, now: () => new Date(), backfillWindowMs: 15 * 60_000, log: { info() {}, warn() {}, error() {} },
  };
});
afterAll(async () => {
  await platform.close();
});

describe("hostile pages beside genuine failures", () => {
  it(`hold the never-silent invariant over ${RUNS} generated pages`, async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(
        pageCaseArb,
        async ({ kind, slots }) => {
          cases++;
          const { problems } = await runPageCase(kind, slots, ORG, platform, deps);
          expect(problems).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
    console.log(`hostile property: ${cases} cases`);
  }, 900_000);
});
