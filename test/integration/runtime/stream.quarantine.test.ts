/**
 * No alert can block the outbox: an alert EventBridge can never take, between normal ones, on the real
 * stream of DynamoDB Local. The others are published exactly once, the bad one is clipped or
 * quarantined (with one health event), the checkpoint moves past it; and `lookout run --once` exits 0.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBStreamsClient } from "@aws-sdk/client-dynamodb-streams";
import type { LookoutEventDetail, LookoutEventEnvelope } from "../../../lib/model/event.js";
import { MAX_ENTRY_BYTES } from "../../../lib/alerts/bus.js";
import { newAlertItem } from "../../../lib/alerts/outbox-item.js";
import { DynamoQuarantine } from "../../../lib/store/quarantine.js";
import { ensureTable } from "../../../lib/store/table.js";
import { CLIP_MARKER } from "../../../lib/model/bounds.js";
import { LocalBus } from "../../../local/runtime/local-bus.js";
import { LOCAL_CREDENTIALS, LOCAL_REGION } from "../../../local/runtime/dynamodb-local.js";
import { OutboxStreamReader, outboxPublisher } from "../../../local/runtime/stream.js";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { freshTable, localDynamoClient, scanTable, TEST_RETENTION_MS, dynamodbEndpoint } from "../../support/dynamodb.js";

let streams: DynamoDBStreamsClient;
beforeAll(() => {
  streams = new DynamoDBStreamsClient({ endpoint: dynamodbEndpoint(), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
});
afterAll(() => streams.destroy());

const base = EXAMPLE_DETAILS["Deployment Failed"];
const alert = (n: string, patch: Partial<LookoutEventDetail> & Record<string, unknown> = {}): LookoutEventDetail =>
  ({ ...base, id: `${base.id}-${n}`, ...patch }) as LookoutEventDetail;
const huge = "x".repeat(300_000);
/** Stored whole, as an older Lookout stored it (today's writes clip it first). */
async function putRaw(doc: DynamoDBDocumentClient, tableName: string, detail: LookoutEventDetail) {
  const item = { ...newAlertItem(detail, detail.observed_at, 4_000_000_000), detail };
  await doc.send(new PutCommand({ TableName: tableName, Item: item }));
}
/** Alerts no clipping can fix: numbers are not text (too large), an unknown transition (invalid). */
const tooLarge = () => alert("numbers", { attachments: Array.from({ length: 30_000 }, (_, i) => 1e10 + i * 1_000_003) });
const invalid = () => alert("melted", { transition: "melted" as never });

const scan = scanTable;
const eventsIn = async (file: string): Promise<LookoutEventEnvelope[]> =>
  existsSync(file) ? (await readFile(file, "utf8")).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];

describe("the outbox moves past an alert EventBridge can never take", () => {
  let client: DynamoDBClient;
  let doc: DynamoDBDocumentClient;
  let tableName: string;
  let dataDir: string;
  beforeEach(async () => {
    ({ client, tableName } = await freshTable("quarantine-outbox"));
    doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    dataDir = await mkdtemp(join(tmpdir(), "lookout-quar-"));
    return async () => {
      client.destroy();
      await rm(dataDir, { recursive: true, force: true });
    };
  });

  it("publishes the others once, clips or quarantines the bad ones with one health event each, and checkpoints past them", async () => {
    const first = alert("first");
    const bigText = alert("big-text", { deployment: { ...base.deployment!, duration: huge, commit: { ...base.deployment!.commit, tag: "t".repeat(20_000) } } });
    const last = alert("last", { service: { ...base.service!, name: "n".repeat(200_000) } });
    for (const d of [first, bigText, tooLarge(), invalid(), last]) await putRaw(doc, tableName, d);

    const bus = new LocalBus({ dataDir });
    const quarantine = new DynamoQuarantine({ client, tableName, retentionMs: TEST_RETENTION_MS });
    const reader = () => new OutboxStreamReader({
      dynamodb: client, streams, tableName, dataDir, onRecords: outboxPublisher(bus, { busName: "lookout" }, undefined, quarantine),
    });
    await reader().drain();
    const events = await eventsIn(bus.file);
    const ids = events.map((e) => e.detail.id);
    for (const d of [first, bigText, last]) expect(ids.filter((id) => id === d.id), d.id).toHaveLength(1);
    expect(ids).not.toContain(tooLarge().id);
    expect(ids).not.toContain(invalid().id);
    for (const e of events) expect(Buffer.byteLength(JSON.stringify(e.detail))).toBeLessThan(MAX_ENTRY_BYTES);
    const clipped = events.find((e) => e.detail.id === bigText.id)!.detail;
    expect(clipped.deployment!.duration!.endsWith(CLIP_MARKER)).toBe(true);
    expect(clipped.clipped).toEqual(["deployment.duration"]); // the longest only: enough to fit

    // One health event per quarantined alert, published in the same drain.
    const health = events.filter((e) => e.detail.transition === "quarantined");
    expect(health.map((e) => e.detail.health!.subject).sort()).toEqual([`publish deployment ${invalid().id}`, `publish deployment ${tooLarge().id}`].sort());
    const items = await scan(doc, tableName);
    const quar = items.filter((i) => i.item_type === "quarantine");
    expect(quar.map((q) => [q.subject_id, q.stage]).sort()).toEqual([[invalid().id, "publish"], [tooLarge().id, "publish"]].sort());
    expect(quar.find((q) => q.subject_id === tooLarge().id)!.reason).toMatch(/EntryTooLarge/);
    expect(quar.find((q) => q.subject_id === invalid().id)!.reason).toMatch(/InvalidDetail/);
    for (const q of quar) expect(Buffer.byteLength(String(q.excerpt))).toBeLessThanOrEqual(4 * 1024);

    // The checkpoint is past all of it: the next drain reads nothing and publishes nothing.
    expect(await reader().drain()).toBe(0);
    expect(await eventsIn(bus.file)).toHaveLength(events.length);
  }, 120_000); // 1 MB of alerts through DynamoDB Local's stream: slow on a busy machine

  it("a passing failure still makes the batch be read again, and nothing is quarantined for it", async () => {
    const one = alert("one");
    await putRaw(doc, tableName, one);
    let down = true;
    const local = new LocalBus({ dataDir });
    const flaky = { putEvents: async (entries: Parameters<LocalBus["putEvents"]>[0]) => {
      if (down) return { FailedEntryCount: entries.length, Entries: entries.map(() => ({ ErrorCode: "ThrottlingException", ErrorMessage: "slow down" })) };
      return local.putEvents(entries);
    } };
    const quarantine = new DynamoQuarantine({ client, tableName, retentionMs: TEST_RETENTION_MS });
    const reader = () => new OutboxStreamReader({
      dynamodb: client, streams, tableName, dataDir,
      onRecords: outboxPublisher(flaky, { busName: "lookout", maxAttempts: 2, sleep: async () => {} }, undefined, quarantine),
    });
    await expect(reader().drain()).rejects.toThrow(/ThrottlingException/);
    expect((await scan(doc, tableName)).filter((i) => i.item_type === "quarantine")).toEqual([]);
    down = false;
    await reader().drain();
    expect((await eventsIn(local.file)).map((e) => e.detail.id)).toEqual([one.id]);
  });
});

describe("lookout run --once with a poisoned outbox", () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 5, size: { applications: 1, clusters: 0, webhooks: 0 } });
  });
  afterAll(() => sim.close());

  const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
  const run = (dir: string, config: string, env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stderr: string }>((done) => {
      execFile(process.execPath, [BIN, "run", "--once", "--config", config], { cwd: dir, env, timeout: 120_000 }, (err, _out, stderr) =>
        done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stderr }));
    });

  it("exits 0, publishes the good alerts once, and the next run publishes nothing more", async () => {
    const dir = await mkdtemp(join(tmpdir(), "lookout-quar-cli-"));
    const table = `quarcli-${randomUUID().slice(0, 8)}`;
    const client = localDynamoClient();
    try {
      await ensureTable(client, table);
      const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
      const [good1, good2] = [alert("cli-1"), alert("cli-2")];
      for (const d of [good1, tooLarge(), good2]) await putRaw(doc, table, d);
      const config = join(dir, "lookout.yaml");
      await writeFile(config, `platform: { url: "${sim.url}", token: "env:SIM_TOKEN" }
watch: [{ organization: ${sim.ids.organizationId}, applications: [${sim.ids.applicationIds[0]}] }]
data_dir: ${join(dir, "data")}
retention: 3650d
`);
      const env = {
        PATH: process.env.PATH, HOME: process.env.HOME, SIM_TOKEN: sim.apiToken, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true",
        DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: table,
      };
      const r1 = await run(dir, config, env);
      expect(r1.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack trace
      expect(r1.code).toBe(0);
      const file = join(dir, "data", "events.ndjson");
      const after1 = await eventsIn(file);
      const ids = after1.map((e) => e.detail.id);
      expect(ids.filter((id) => id === good1.id || id === good2.id).sort()).toEqual([good1.id, good2.id].sort());
      expect(after1.filter((e) => e.detail.transition === "quarantined")).toHaveLength(1);
      const r2 = await run(dir, config, env);
      expect(r2.code).toBe(0);
      expect(await eventsIn(file)).toHaveLength(after1.length);
    } finally {
      client.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000); // two CLI runs, each starting a process
});
