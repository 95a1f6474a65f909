/**
 * Bounded answers (README, `platform.timeout` and `platform.max_response_size`): a body that stalls
 * times out after the configured timeout; an answer too large — plain, or a gzip bomb — is refused while
 * it streams, memory staying bounded; the source backs off and the other sources are polled as usual.
 * A plain node:http server plays the platform.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { createGzip } from "node:zlib";
import { Readable } from "node:stream";
import { createPlatformClient, type PlatformClientOptions } from "../../../lib/platform/client.js";
import { PlatformResponseTooLargeError, PlatformTimeoutError } from "../../../lib/platform/errors.js";
import { parseConfig } from "../../../lib/config/load.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { DynamoDispatchStore } from "../../../lib/store/dispatch-store.js";
import { everySource } from "../../../lib/dispatch/tick.js";
import { pollAndRecord } from "../../../lib/dispatch/poll-batch.js";
import { watchlist } from "../../../lib/dispatch/watchlist.js";
import { freshTable, TEST_RETENTION_MS } from "../../support/dynamodb.js";

const ORG = randomUUID();
const STALLS = randomUUID();
const BOMB = randomUUID();
const HUGE = randomUUID();
const FINE = randomUUID();
const DECLARED = randomUUID();
const MB = 1024 * 1024;
let server: Server;
let url: string;
const open = new Set<import("node:net").Socket>();

/** 1 GB of zeros, produced as it is read: the server never holds it, nor does the client. */
function zeros(total: number): Readable {
  const chunk = Buffer.alloc(64 * 1024);
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

function hugeJson(bytes: number): Readable {
  let sent = 0;
  const filler = `${JSON.stringify({ id: randomUUID(), target_response_body: "x".repeat(4000) })},`;
  return new Readable({
    read() {
      if (sent === 0) this.push('{"results": [');
      if (sent >= bytes) {
        this.push(`${filler.slice(0, -1)}]}`);
        return void this.push(null);
      }
      sent += filler.length;
      this.push(filler);
    },
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = req.url ?? "";
    res.setHeader("content-type", "application/json");
    if (u.includes(STALLS)) {
      // Headers and the start of a body, then nothing.
      res.writeHead(200);
      return void res.write('{"results": [');
    }
    if (u.includes(BOMB)) {
      res.writeHead(200, { "content-encoding": "gzip" });
      return void zeros(1024 * MB).pipe(createGzip({ level: 1 })).pipe(res);
    }
    if (u.includes(DECLARED)) {
      // Says it is 30 MB, sends a byte, then stalls: refused on the header, not waited for.
      res.writeHead(200, { "content-length": String(30 * MB) });
      return void res.write("{");
    }
    if (u.includes(HUGE)) {
      res.writeHead(200); // chunked: no length to refuse it by
      return void hugeJson(60 * MB).pipe(res);
    }
    res.end(JSON.stringify({ results: [] }));
  });
  server.on("connection", (s) => {
    open.add(s);
    s.on("close", () => open.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of open) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

const client = (extra: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({ baseUrl: url, token: "t-bounded", auth: "token", sleep: async () => {}, ...extra });
const webhookEvents = (c: ReturnType<typeof client>, webhookId: string) =>
  c.listWebhookEvents({ path: { organizationId: ORG, webhookId } });

describe("a platform answer is bounded in time and size", () => {
  it("a body that stalls after the headers times out after platform.timeout, each attempt", async () => {
    const err = await webhookEvents(client({ timeoutMs: 300, retry: { maxAttempts: 2 } }), STALLS).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformTimeoutError);
    expect(err.message).toMatch(/did not answer within 300 ms: GET \/organization\/\S+\/webhook\/\S+\/event \(listWebhookEvents\)/);
    expect(err.cost).toMatchObject({ requests: 2, statuses: [0, 0] });
  });

  it("a gzip bomb (1 GB of zeros) is refused once 20 MB are decompressed, memory bounded, not retried", async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    const err = await webhookEvents(client({ timeoutMs: 60_000 }), BOMB).catch((e) => e);
    const grown = process.memoryUsage().rss - before;
    expect(err).toBeInstanceOf(PlatformResponseTooLargeError);
    expect(err.kind).toBe("response_too_large");
    expect(err.message).toMatch(/larger than 20 MB \(platform.max_response_size\).*\(listWebhookEvents\)/);
    expect(err.cost).toMatchObject({ requests: 1, retries: 0, statuses: [200] });
    console.log(`gzip bomb refused: rss grew ${(grown / MB).toFixed(1)} MB`);
    expect(grown).toBeLessThan(200 * MB);
  });

  it("an oversized plain body is refused at the configured limit", async () => {
    const before = process.memoryUsage().rss;
    const err = await webhookEvents(client({ maxResponseBytes: 5 * MB }), HUGE).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformResponseTooLargeError);
    expect(err.message).toMatch(/larger than 5 MB/);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MB);
  });

  it("an answer whose declared length is over the limit is refused without waiting for its body", async () => {
    const err = await webhookEvents(client({ maxResponseBytes: 5 * MB, timeoutMs: 60_000 }), DECLARED).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformResponseTooLargeError);
    expect(err.cost).toMatchObject({ requests: 1, statuses: [200] });
  });

  it("an answer within the limit is read as before", async () => {
    const res = await webhookEvents(client({ maxResponseBytes: 1024 }), FINE);
    expect(res.data).toEqual({ results: [] });
  });

  it("the source that floods backs off like any failing one; the others in the same run are polled", async () => {
    const { client: dynamodb, tableName } = await freshTable("bounded");
    const config = parseConfig(
      `platform: { url: "${url}", token: "env:T", timeout: 2s, max_response_size: 1MB }
watch: [{ organization: ${ORG}, webhooks: [${STALLS}, ${BOMB}, ${HUGE}, ${FINE}] }]
`,
      "bounded.yaml",
    );
    expect(config.platform.maxResponseBytes).toBe(MB);
    const watch = watchlist(config);
    const dispatch = new DynamoDispatchStore({ client: dynamodb, tableName });
    const deps = {
      client: client({ timeoutMs: config.platform.timeoutMs, maxResponseBytes: config.platform.maxResponseBytes, retry: { maxAttempts: 1 } }),
      store: new DynamoIngestStore({ client: dynamodb, tableName, retentionMs: TEST_RETENTION_MS }),
      now: () => new Date(),
      backfillWindowMs: config.backfillWindowMs,
      log: { info() {}, warn() {}, error() {} },
    };
    const results = await Promise.all((await everySource(dispatch, watch, Date.now())).map((req) => pollAndRecord(req, deps, dispatch, watch)));
    const by = Object.fromEntries(results.map((r) => [r.source.split("/")[1], r]));
    expect(by[STALLS]).toMatchObject({ ok: false, error: { kind: "timeout" } });
    expect(by[BOMB]).toMatchObject({ ok: false, error: { kind: "response_too_large" } });
    expect(by[HUGE]).toMatchObject({ ok: false, error: { kind: "response_too_large" } });
    expect(by[HUGE]!.error!.message).toMatch(/larger than 1 MB/);
    expect(by[FINE]).toMatchObject({ ok: true, requests: 1 });
    const state = (await dispatch.get("default"))!;
    for (const id of [BOMB, HUGE]) {
      expect(state.sources[`webhook:${ORG}/${id}`]).toMatchObject({ consecutive_failures: 1, last_error: "response_too_large" });
      expect(state.sources[`webhook:${ORG}/${id}`]!.next_allowed_at).toBeGreaterThan(0);
    }
    dynamodb.destroy();
  });

  it("a bad size in the configuration names the field", () => {
    expect(() => parseConfig(`platform: { url: "${url}", token: "env:T", max_response_size: 20 parsecs }\nwatch: [{ organization: ${ORG} }]\n`, "x.yaml"))
      .toThrow("x.yaml: platform.max_response_size: is not a size like 512KB, 20MB or 1GB");
  });
});
