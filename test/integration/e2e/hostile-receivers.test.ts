/**
 * Hostile answers, proven where a person looks: the failures test/integration/poll/poll.hostile-cases.test.ts
 * finds in hostile answers (a status over a kilobyte, ids of 300,000 characters that differ only at their
 * end, an id listed twice with its good copy first, a failure dated hours ahead, a fresh failure beside
 * 600 old entries with no usable time) run through the whole local pipeline (`runLookout`, as `lookout
 * run --once`) to the Slack test receiver (Web API form) and email as .eml files. Each must be shown at
 * both, once, and every message must stay within what the receiver takes (docs/events.md, "The promise,
 * checked at the receivers").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { simpleParser } from "mailparser";
import { checkConfig, type Config } from "../../../lib/config/load.js";
import { runLookout } from "../../../local/runtime/run.js";
import { startSlackReceiver, type SlackReceiver } from "../../../local/receivers/slack-receiver.js";
import { isChangesMessage } from "../../support/amendment.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";
import { startHostilePlatform, type HostilePlatform } from "../../support/hostile-platform.js";
import { delivery, deployment, set, type Json } from "../../support/platform-items.js";

const MIN = 60_000;
const ORG = randomUUID();
const silent = { info() {}, warn() {}, error() {} };

/** One hostile case per source, told apart at the receivers by the name the configuration gives it. */
const app = { status: randomUUID(), hugeIds: randomUUID(), future: randomUUID(), timeless: randomUUID() };
const hook = { hugeIds: randomUUID(), duplicate: randomUUID() };
const NAMES: Record<string, string> = {
  [app.status]: "case-long-status", [app.hugeIds]: "case-huge-executions", [app.future]: "case-future", [app.timeless]: "case-timeless",
};
/** Webhook failures show their target's host: one per case. */
const HOSTS: Record<string, string> = { [hook.hugeIds]: "case-huge-deliveries.example.com", [hook.duplicate]: "case-duplicate.example.com" };

const path = {
  app: (id: string) => `/application/${id}/deploymentHistoryV2`,
  webhook: (id: string) => `/organization/${ORG}/webhook/${id}/event`,
};

let platform: HostilePlatform;
let slack: SlackReceiver;
let config: Config;
let env: NodeJS.ProcessEnv;
let dataDir: string;
/** The runs' clock: the wall clock moved on by what the test says has passed. */
let offset = 0;
const now = () => Date.now() + offset;
const at = (t: number) => new Date(t).toISOString();

beforeAll(async () => {
  [platform, slack] = await Promise.all([startHostilePlatform(), startSlackReceiver()]);
  dataDir = mkdtempSync(join(tmpdir(), "lookout-hostile-receivers-"));
  env = {
    PLATFORM_TOKEN: platform.token, SLACK_BOT_TOKEN: "xoxb-test", LOOKOUT_SLACK_API_URL: slack.apiUrl,
    DYNAMODB_ENDPOINT: dynamodbEndpoint(), LOOKOUT_TABLE: `hostile-receivers-${randomUUID().slice(0, 8)}`,
  };
  config = checkConfig(
    {
      platform: { url: platform.url, token: "env:PLATFORM_TOKEN" },
      watch: [{
        organization: ORG,
        applications: Object.values(app).map((id) => ({ id, name: NAMES[id], environment: "prod" })),
        webhooks: Object.values(hook),
      }],
      data_dir: dataDir,
      routes: [{ name: "everything", slack: [{ channel: "#oncall", token: "env:SLACK_BOT_TOKEN" }], email: { to: ["oncall@example.com"] } }],
      notify: { email: { from: "lookout@example.com" } },
    },
    "hostile-receivers",
    {},
  );
});
afterAll(async () => {
  await Promise.all([platform.close(), slack.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

const run = () => runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => new Date(now()) });
const emails = () => {
  const dir = join(config.dataDir, "outbox");
  return existsSync(dir) ? readdirSync(dir).sort().map((f) => readFileSync(join(dir, f), "utf8")) : [];
};
/** A deployment entry of `service` created at `t` (updated a minute later). */
function dep(service: string, exec: string, status: string, t: number, marker = "fix things"): Json {
  const d = set(deployment(service, exec, status, 0), "details.commit.message", marker);
  (d.auditing_data as Json).created_at = at(t);
  (d.auditing_data as Json).updated_at = at(t + MIN);
  return d;
}
const failed = (id: string, host: string, t: number): Json => ({ ...set(delivery(id, 503, 0), "target_url_used", `https://${host}/in`), created_at: at(t) });

describe("hostile answers through the local pipeline, at the Slack and email receivers", () => {
  it("shows each failure a hostile answer holds, once, at both receivers, within their limits", { timeout: 120_000 }, async () => {
    // First sight: nothing, or old entries with no usable time.
    const old = Array.from({ length: 600 }, (_, i) =>
      set(set(deployment(app.timeless, `old-${i}`, "DEPLOYED", 0), "auditing_data.created_at", "not a time"), "auditing_data.updated_at", "not a time"));
    for (const id of [app.status, app.hugeIds, app.future]) platform.list(path.app(id), []);
    platform.list(path.app(app.timeless), old);
    for (const id of Object.values(hook)) platform.list(path.webhook(id), []);
    await run();
    expect(slack.messages).toHaveLength(0);
    expect(emails()).toHaveLength(0);

    // The hostile answers.
    offset += MIN;
    const t = now();
    platform.list(path.app(app.status), [dep(app.status, `long-${randomUUID()}`, `QUANTUM${"_X".repeat(1500)}_ERROR`, t - 3 * MIN, "MARK-long-status")]);
    const stem = "E".repeat(300_000);
    platform.list(path.app(app.hugeIds), [1, 2].map((i) =>
      dep(app.hugeIds, `${stem}-${i}-${randomUUID()}`, i === 1 ? "BUILD_ERROR" : "DEPLOYMENT_ERROR", t - 5 * MIN + i * 1000, `MARK-huge-${i}`)));
    const future = dep(app.future, `fut-${randomUUID()}`, "DEPLOYMENT_ERROR", t + 2 * 60 * MIN, "MARK-future");
    platform.list(path.app(app.future), [future]);
    platform.list(path.app(app.timeless), [dep(app.timeless, `fresh-${randomUUID()}`, "DEPLOYMENT_ERROR", t - 2 * MIN, "MARK-timeless"), ...old]);
    const dStem = "D".repeat(300_000);
    platform.list(path.webhook(hook.hugeIds), [1, 2].map((i) => failed(`${dStem}-${i}-${randomUUID()}`, HOSTS[hook.hugeIds]!, t - 30_000 + i)));
    const dupId = `dup-${randomUUID()}`;
    platform.list(path.webhook(hook.duplicate), [{ ...failed(dupId, HOSTS[hook.duplicate]!, t - 30_000), target_response_status_code: 200, target_response_body: "ok" }, failed(dupId, HOSTS[hook.duplicate]!, t - 30_000)]);
    await run();

    // The future failure's recovery, then a later failure: each shown.
    offset += 5 * MIN;
    const ok = dep(app.future, `ok-${randomUUID()}`, "DEPLOYED", now() - 2 * MIN, "MARK-future-fixed");
    platform.list(path.app(app.future), [ok, future]);
    await run();
    offset += 5 * MIN;
    platform.list(path.app(app.future), [dep(app.future, `bad-${randomUUID()}`, "BUILD_ERROR", now() - 2 * MIN, "MARK-future-again"), ok, future]);
    await run();

    // Slack: each failure shown once — a message of its own (a new incident), a reply under its
    // incident's root, or a line of the receiver's digest (the run raised more than its burst of 10).
    const api = slack.messages.filter((m) => m.form === "api");
    const text = (m: (typeof api)[number]) => JSON.stringify(m);
    const isDigest = (raw: string) => raw.includes("Lookout held back");
    const failureMessages = api.filter((m) => isDigest(text(m)) || !isChangesMessage(text(m)));
    const shown = (marker: string) => failureMessages.filter((m) => new RegExp(`${marker}(?![-\\w])`).test(text(m)));
    for (const marker of ["MARK-long-status", "MARK-huge-1", "MARK-huge-2", "MARK-future", "MARK-timeless", "MARK-future-again"]) {
      expect(shown(marker).length, marker).toBe(1);
    }
    // The future-dated failure's incident was closed by the real recovery, and the later failure opened
    // another: the recovery did not read as older than the failure dated hours ahead.
    const futureShown = api.filter((m) => text(m).includes(NAMES[app.future]!));
    expect(futureShown.some((m) => /recovered|Resolved after/.test(m.text ?? ""))).toBe(true);
    expect(futureShown.filter((m) => !m.thread_ts && text(m).includes("MARK-future-again"))).toHaveLength(1);
    // Nothing resolved what is still failing: the timeless history's failure, the long status, the huge ids.
    for (const name of [NAMES[app.timeless]!, NAMES[app.status]!, NAMES[app.hugeIds]!]) {
      expect(api.filter((m) => text(m).includes(name) && /recovered|Resolved after/.test(text(m))), name).toEqual([]);
    }
    // Webhooks: both huge-id deliveries (an opening and a repeat in its thread), the duplicate id once.
    const hugeHook = api.filter((m) => text(m).includes(HOSTS[hook.hugeIds]!));
    expect(hugeHook.filter((m) => !m.thread_ts)).toHaveLength(1);
    expect(hugeHook).toHaveLength(2);
    expect(api.filter((m) => text(m).includes(HOSTS[hook.duplicate]!))).toHaveLength(1);
    // Within what Slack takes: no message near its 40,000-character text or 50-block limits.
    for (const m of api) {
      expect(text(m).length, "a message's size").toBeLessThan(40_000);
      expect((m.blocks ?? []).length).toBeLessThanOrEqual(50);
    }

    // Email: the same failures, a message each in its incident's conversation (what changed aside; a
    // repeat of the same error is not sent by email, its close counts it: docs/events.md).
    const mails = await Promise.all(emails().filter((e) => !isChangesMessage(e)).map((e) => simpleParser(e)));
    const about = (name: string) => mails.filter((m) => m.subject?.includes(name));
    expect(about(NAMES[app.hugeIds]!)).toHaveLength(2);
    expect(about(NAMES[app.status]!)).toHaveLength(1);
    expect(about(NAMES[app.timeless]!)).toHaveLength(1);
    expect(about(NAMES[app.future]!)).toHaveLength(3); // failed, recovered, failed again
    expect(about(HOSTS[hook.hugeIds]!)).toHaveLength(1);
    expect(about(HOSTS[hook.duplicate]!)).toHaveLength(1);
    for (const marker of ["MARK-long-status", "MARK-huge-1", "MARK-huge-2", "MARK-timeless", "MARK-future", "MARK-future-fixed", "MARK-future-again"]) {
      expect(mails.some((m) => new RegExp(`${marker}(?![-\\w])`).test(m.text ?? "")), marker).toBe(true);
    }
    // Readable: every value at most 3,000 characters (the whole value is in the audit trail).
    for (const m of mails) expect(m.text!.split("\n").every((l) => l.length <= 3_100), m.subject).toBe(true);
  });
});
