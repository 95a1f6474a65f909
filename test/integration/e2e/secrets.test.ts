/**
 * Nothing secret at rest or in any output (docs/security.md): every secret kind Lookout redacts is
 * planted in every text field of every source a plain node:http platform serves, the real
 * `lookout run --once` runs in a child process (DynamoDB Local with its data in <data_dir>/dynamodb,
 * Slack to the test receiver, email to .eml files), and every byte it wrote is scanned: the DynamoDB
 * Local files, the data folder (events.ndjson, .eml, checkpoints), stdout, stderr and what Slack got.
 * 0 hits is the pass; canaries beside the secrets prove each output was written and read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startDynamoDbLocal, type DynamoDbLocal } from "../../../local/runtime/dynamodb-local.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { plantAll, plantSecret, SecretScanner, textWith, type PlantedSecret, type SecretHit } from "../../support/secret-scan.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const BIN = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;

const ids = { org: randomUUID(), slackHook: randomUUID(), proxyHook: randomUUID(), standardHook: randomUUID(), rejectHook: randomUUID(), app: randomUUID(), cluster: randomUUID() };
const planted: PlantedSecret[] = [];

/** Free text for a field: a canary naming the field, then every secret kind, unique to the field. */
function field(name: string): string {
  const secrets = plantAll(name);
  planted.push(...secrets);
  return textWith(secrets, `canary-${name}`);
}

/** A URL for a URL-shaped field: credentials, a secret query parameter and a token in the path. */
function urlField(name: string, host: string): string {
  const creds = plantSecret("url-credentials", name);
  const query = plantSecret("url-query-token", name);
  const token = plantSecret("github-token", name);
  planted.push(creds, query, token);
  return `https://deploy:${creds.secret}@${host}/canary-${name}/${token.secret}?view=log&token=${query.secret}`;
}

function slackUrlField(name: string): string {
  const hook = plantSecret("slack-webhook", name);
  planted.push(hook);
  return hook.text;
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

function deliveries(webhookId: string): unknown[] {
  if (webhookId === ids.slackHook) {
    const target = slackUrlField("webhook.slack.target_url_used");
    return [{
      id: randomUUID(), created_at: minutesAgo(2), kind: "SLACK", matched_event: "DEPLOYMENT_FAILURE", target_url_used: target,
      request: { url: target, headers: { "Content-Type": "application/json", "X-Note": field("webhook.slack.request.headers") }, text: field("webhook.slack.request.text") },
      target_response_status_code: 404, target_response_body: field("webhook.slack.target_response_body"),
    }];
  }
  if (webhookId === ids.proxyHook) {
    // A SLACK-kind target that is not hooks.slack.com: its whole path is the secret all the same.
    const secret = plantSecret("slack-webhook", "webhook.slack-proxy.target_url_used");
    const path = `hook/${secret.secret}`;
    planted.push({ ...secret, secret: path });
    const target = `https://slack-proxy.example.com/${path}`;
    return [{
      id: randomUUID(), created_at: minutesAgo(2), kind: "SLACK", matched_event: "DEPLOYMENT_FAILURE", target_url_used: target,
      request: { url: target, body: `posted to ${target}` }, target_response_status_code: 500, target_response_body: `no route to ${target}`,
    }];
  }
  if (webhookId === ids.standardHook) {
    const target = urlField("webhook.standard.target_url_used", "hooks.example.com");
    return [{
      id: randomUUID(), created_at: minutesAgo(2), kind: "STANDARD", matched_event: field("webhook.standard.matched_event"), target_url_used: target,
      request: {
        url: target,
        headers: { "Content-Type": "application/json", "X-Trace": field("webhook.standard.request.headers") },
        payload: {
          project: { id: randomUUID(), name: field("webhook.standard.request.project.name") },
          environment: { id: randomUUID(), name: field("webhook.standard.request.environment.name"), type: "PRODUCTION" },
          applications: [{ id: randomUUID(), name: field("webhook.standard.request.applications.name"), status: "DEPLOYMENT_ERROR" }],
          logs: [{ timestamp: minutesAgo(2), message: field("webhook.standard.request.logs.message") }],
        },
      },
      target_response_status_code: 502, target_response_body: field("webhook.standard.target_response_body"),
    }];
  }
  // One item that does not match the spec: skipped, and logged (redacted) as a warning.
  return [{
    id: randomUUID(), created_at: minutesAgo(2), kind: "SLACK", target_url_used: slackUrlField("webhook.rejected.target_url_used"),
    target_response_status_code: field("webhook.rejected.target_response_status_code"), target_response_body: field("webhook.rejected.target_response_body"),
  }];
}

function deployments(): unknown {
  return {
    page: 1, page_size: 10,
    results: [{
      identifier: { name: field("deployment.identifier.name"), service_id: ids.app, service_type: "APPLICATION", execution_id: randomUUID() },
      status: "DEPLOYMENT_ERROR",
      auditing_data: { created_at: minutesAgo(6), updated_at: minutesAgo(1), triggered_by: field("deployment.triggered_by"), origin: field("deployment.origin") },
      details: {
        commit: {
          created_at: minutesAgo(30), git_commit_id: "0123456789abcdef0123456789abcdef01234567", tag: field("deployment.commit.tag"),
          message: field("deployment.commit.message"), author_name: field("deployment.commit.author_name"),
          author_avatar_url: urlField("deployment.commit.author_avatar_url", "avatars.example.com"),
          commit_page_url: urlField("deployment.commit.commit_page_url", "git.example.com"),
        },
        build_pod_name: field("deployment.build_pod_name"),
      },
      status_details: { action: field("deployment.status_details.action"), status: "ERROR", sub_action: field("deployment.status_details.sub_action") },
      total_duration: "PT8M42S",
    }],
  };
}

function clusterLogs(): unknown {
  const details = { provider_kind: field("cluster.details.provider_kind"), region: field("cluster.details.region"), transmitter: { type: "Cluster", id: ids.cluster, name: field("cluster.transmitter.name") } };
  return {
    results: [{
      type: "error", timestamp: minutesAgo(3), step: "UpgradeError",
      message: { safe_message: field("cluster.message") },
      error: {
        tag: "CANNOT_UNINSTALL_HELM_CHART", user_log_message: field("cluster.error.user_log_message"), link: urlField("cluster.error.link", "docs.example.com"),
        hint_message: field("cluster.error.hint_message"), underlying_error: { message: field("cluster.error.underlying_error") },
        event_details: details,
      },
      details,
    }],
  };
}

/** Built once: the same items at every read, as a real platform's immutable records are. */
const once = <T>(make: () => T) => {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
};
const bodies = {
  deliveries: new Map<string, () => unknown[]>(Object.values({ a: ids.slackHook, b: ids.proxyHook, c: ids.standardHook, d: ids.rejectHook }).map((id) => [id, once(() => deliveries(id))])),
  deployments: once(deployments),
  clusterLogs: once(clusterLogs),
};

/** The platform: the four endpoints `lookout run --once` reads; anything else is a 404 it must not need. */
function platform(): Promise<{ server: Server; url: string; unknown: string[] }> {
  const unknown: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    let m: RegExpExecArray | null;
    if (path === `/organization/${ids.org}/project`) return json(200, { results: [{ id: randomUUID(), name: "shop" }] });
    if ((m = /^\/organization\/[^/]+\/webhook\/([^/]+)\/event$/.exec(path))) return json(200, { results: bodies.deliveries.get(m[1]!)?.() ?? [] });
    if (path === `/application/${ids.app}/deploymentHistoryV2`) return json(200, bodies.deployments());
    if (path === `/organization/${ids.org}/cluster/${ids.cluster}/logs`) return json(200, bodies.clusterLogs());
    unknown.push(`${req.method} ${path}`);
    json(404, { status: 404, detail: "not found" });
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => {
    const addr = server.address();
    ok({ server, url: `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`, unknown });
  }));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function lookout(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd, env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr });
    });
  });
}

const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: process.env.HOME, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" });

let api: Awaited<ReturnType<typeof platform>>;
let slack: SlackReceiver;
beforeAll(async () => {
  [api, slack] = await Promise.all([platform(), startSlackReceiver()]);
});
afterAll(async () => {
  await new Promise((ok) => api.server.close(ok));
  await slack.close();
});

/** Hits as `kind × field × output` lines, for a failure message and the report. */
const table = (hits: SecretHit[]) => hits.map((h) => `${h.kind} in ${h.field} → ${h.output} (${h.piece})`).join("\n");

describe("planted secrets, end to end", () => {
  it("lookout run --once writes none of them anywhere: DynamoDB Local files, data folder, stdout, stderr, Slack", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-secrets-"));
    const configFile = join(dataDir, "..", `${randomUUID().slice(0, 8)}-secrets.yaml`);
    writeFileSync(
      configFile,
      JSON.stringify({
        platform: { url: api.url, token: "env:PLATFORM_TOKEN" },
        watch: [{ organization: ids.org, webhooks: [ids.slackHook, ids.proxyHook, ids.standardHook, ids.rejectHook], clusters: [ids.cluster], applications: [ids.app] }],
        data_dir: dataDir,
        routes: [{ name: "everything", match: { kind: ["deployment", "webhook_delivery", "cluster_log"] }, slack: [{ webhook_url: "env:SLACK_WEBHOOK" }], email: { to: ["oncall@example.com"] } }],
        notify: { email: { from: "lookout@example.com" } },
      }),
    );
    // DynamoDB Local on <data_dir>/dynamodb, as `lookout run` starts it, with time to start on a busy machine.
    let ddb: DynamoDbLocal | undefined = await startDynamoDbLocal({ dataDir: join(dataDir, "dynamodb"), readyTimeoutMs: 180_000 });
    let run: Run;
    try {
      run = await lookout(["run", "--once", "--config", configFile], {
        ...baseEnv(), PLATFORM_TOKEN: "platform-token-for-the-test", SLACK_WEBHOOK: slack.webhookUrl(), DYNAMODB_ENDPOINT: ddb.endpoint,
      }, dataDir);
    } finally {
      await ddb.stop(); // its files are complete once it has stopped
      ddb = undefined;
    }
    expect(run.code, `${run.stderr}\nunknown requests: ${api.unknown.join(", ")}`).toBe(0);

    const scanner = new SecretScanner(planted);
    await scanner.scanDir("data", dataDir);
    scanner.scanText("stdout", run.stdout);
    scanner.scanText("stderr", run.stderr);
    scanner.scanText("slack", JSON.stringify(slack.messages));

    // Canaries: each output was written, holds what was read, and was scanned.
    const all = (output: string) => [...scanner.scanned.keys()].filter((k) => k.startsWith(output));
    expect(all("data:dynamodb/").length).toBeGreaterThan(0);
    expect(all("data:events.ndjson").length).toBe(1);
    expect(all("data:outbox/").length).toBeGreaterThan(0);
    expect(slack.messages.length).toBeGreaterThan(0);
    // An alert from every source reached the bus (the three SLACK/STANDARD deliveries, the deployment, the
    // cluster), what changed before the deployment failed (its commits, read from the platform), and the
    // health event of the item the spec rejects, quarantined (its excerpt redacted too).
    const published = readFileSync(join(dataDir, "events.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { "detail-type": string });
    expect(published.map((e) => e["detail-type"]).sort()).toEqual(["Cluster Error", "Deployment Changes Listed", "Deployment Failed", "Lookout Health", "Webhook Delivery Failed", "Webhook Delivery Failed", "Webhook Delivery Failed"]);
    expect(run.stderr).toContain("canary-webhook.rejected");
    expect(run.stdout).toContain("canary-deployment.identifier.name");
    expect(JSON.stringify(slack.messages)).toContain("canary-");

    const fields = new Set(planted.map((p) => p.field));
    const kinds = new Set(planted.map((p) => p.kind));
    console.info(
      `planted ${planted.length} secrets: ${kinds.size} kinds × ${fields.size} fields; scanned ${scanner.scanned.size} outputs; ${scanner.hits.length} hits`,
      JSON.stringify(scanner.summary()),
    );
    expect(scanner.hits, table(scanner.hits)).toEqual([]);
  }, 400_000);
});

describe("a platform URL that holds a password", () => {
  it("is never printed: the start-up error names the host and hides the credentials", async () => {
    const secret = plantSecret("url-credentials", "platform.url");
    const dir = mkdtempSync(join(tmpdir(), "lookout-secret-url-"));
    const configFile = join(dir, "lookout.yaml");
    writeFileSync(
      configFile,
      JSON.stringify({ platform: { url: api.url.replace("http://", `http://lookout:${secret.secret}@`), token: "env:PLATFORM_TOKEN" }, watch: [{ organization: ids.org, applications: [ids.app] }], data_dir: join(dir, "data") }),
    );
    const run = await lookout(["run", "--once", "--config", configFile], {
      ...baseEnv(), PLATFORM_TOKEN: "platform-token-for-the-test", DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `secret-url-${randomUUID().slice(0, 8)}`,
    }, dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^lookout run: cannot reach the platform at http:\/\/\[redacted:url-credentials\]@127\.0\.0\.1:\d+ /);
    const scanner = new SecretScanner([secret]);
    scanner.scanText("stdout", run.stdout);
    scanner.scanText("stderr", run.stderr);
    expect(scanner.hits, table(scanner.hits)).toEqual([]);
  }, 120_000);
});

describe("planted secrets through lookout start (what npm start runs with a configuration)", () => {
  it("writes none of them in the terminal's Slack preview, its log, the data folder or the DynamoDB Local files", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lookout-secrets-start-"));
    const configFile = join(dataDir, "..", `${randomUUID().slice(0, 8)}-secrets-start.yaml`);
    // No Slack receiver: `start` shows every Slack message in the terminal, as the demo does.
    writeFileSync(configFile, JSON.stringify({
      platform: { url: api.url, token: "env:PLATFORM_TOKEN" },
      watch: [{ organization: ids.org, webhooks: [ids.slackHook, ids.proxyHook, ids.standardHook, ids.rejectHook], clusters: [ids.cluster], applications: [ids.app] }],
      data_dir: dataDir,
      poll_interval: "2s",
      notify: { email: { from: "lookout@example.com" }, default: { email: { to: ["oncall@example.com"] } } },
    }));
    let ddb: DynamoDbLocal | undefined = await startDynamoDbLocal({ dataDir: join(dataDir, "dynamodb"), readyTimeoutMs: 180_000 });
    let stdout = "";
    let stderr = "";
    try {
      const child = spawn(process.execPath, [BIN, "start", "--config", configFile], {
        cwd: dataDir, env: { ...baseEnv(), PLATFORM_TOKEN: "platform-token-for-the-test", DYNAMODB_ENDPOINT: ddb.endpoint }, stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const exited = new Promise((ok) => child.on("exit", ok));
      const events = () => (existsSync(join(dataDir, "events.ndjson")) ? readFileSync(join(dataDir, "events.ndjson"), "utf8").trim().split("\n").length : 0);
      for (const until = Date.now() + 150_000; events() < 6 && Date.now() < until; ) await new Promise((ok) => setTimeout(ok, 500));
      await new Promise((ok) => setTimeout(ok, 2_000)); // the last deliveries and previews
      child.kill("SIGINT");
      await exited;
    } finally {
      await ddb.stop();
      ddb = undefined;
    }
    const scanner = new SecretScanner(planted);
    await scanner.scanDir("data", dataDir);
    scanner.scanText("stdout", stdout);
    scanner.scanText("stderr", stderr);
    expect(stdout).toContain("slack (not configured: shown here)");
    expect(stdout).toContain("canary-");
    expect([...scanner.scanned.keys()].some((k) => k.startsWith("data:outbox/"))).toBe(true);
    console.info(`lookout start: ${planted.length} planted secrets; scanned ${scanner.scanned.size} outputs; ${scanner.hits.length} hits`);
    expect(scanner.hits, table(scanner.hits)).toEqual([]);
  }, 400_000);
});
