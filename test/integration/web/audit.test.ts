/**
 * The audit web page in a real browser: playwright-core driving the system's Chromium against
 * `lookout audit --serve` (the audit API's handler behind node:http) on a DynamoDB Local table filled
 * through the real pipeline from the simulator (pollSource → store, deliver → notify store), as
 * test/integration/audit/trail.test.ts does. It filters by a service given by name, pages, opens "who was
 * told and why not", an incident timeline, a CSV export and the delivery report's charts (uPlot), and
 * shows platform text as text.
 *
 * Skipped, with a warning, where no Chromium is installed (`apt-get install -y chromium`; .ci/run
 * installs it where it can). CHROMIUM_PATH names another binary.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { DynamoIngestStore } from "../../../lib/store/ingest-store.js";
import { DynamoNotifyStore } from "../../../lib/store/notify-store.js";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { deliver, type DeliverDeps } from "../../../lib/notify/deliver.js";
import type { AlertItem } from "../../../lib/model/alert-item.js";
import type { Mute } from "../../../lib/model/notify-store.js";
import { auditServeCommand } from "../../../local/cli/audit-commands.js";
import { freshTable, scanTable, TEST_RETENTION_MS, dynamodbEndpoint } from "../../support/dynamodb.js";
import { recordingChannel } from "../../support/recording-channel.js";

const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p): p is string => !!p && existsSync(p));
if (!CHROMIUM) console.warn("audit-web: no Chromium binary (apt-get install -y chromium, or set CHROMIUM_PATH): the browser test is skipped");

const silent = { info() {}, warn() {}, error() {} };
const MINUTE = 60_000;
/** Platform text meant to be markup, and a spreadsheet formula: both must come out as plain text. */
const HOSTILE_ACTOR = '<img src=x onerror="window.__pwned=1">@example.com';
const FORMULA_ACTOR = '=HYPERLINK("http://evil.example/","fix")';

let sim: Simulator;
let client: DynamoDBClient;
let tableName: string;
let serviceId: string;
let otherServiceId: string;
/** The simulator's start: the deployments below are in the day from it. */
let t0: number;
let serviceName: string;
let failed: AlertItem;
let stillFailing: AlertItem;
let recovered: AlertItem;
let browser: Browser | undefined;
let page: Page;
let url: string;
const stop = new AbortController();
let served: Promise<number> | undefined;

beforeAll(async () => {
  if (!CHROMIUM) return;
  const launching = chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
  ({ client, tableName } = await freshTable("audit-web"));
  sim = await startSimulator({ seed: 5, size: { applications: 3, clusters: 1, webhooks: 1, pastDeployments: 0 } });
  const simNow = () => sim.clock.now();
  const store = new DynamoIngestStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: simNow });
  const notify = new DynamoNotifyStore({ client, tableName, retentionMs: TEST_RETENTION_MS, now: simNow });
  const deps: PollDeps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store, now: simNow, backfillWindowMs: 15 * MINUTE, log: silent,
  };
  const org = sim.ids.organizationId;
  const sources: SourceRef[] = [
    { kind: "webhook", organizationId: org, id: sim.ids.webhookIds[0]! },
    ...sim.ids.applicationIds.map((id): SourceRef => ({ kind: "deployment", organizationId: org, id })),
  ];
  const round = async () => {
    for (const s of sources) await pollSource({ source: s }, deps);
  };
  await round(); // first sight

  // One service fails, fails again, and recovers: one incident of three alerts. Another deploys fine.
  serviceId = sim.ids.applicationIds[0]!;
  otherServiceId = sim.ids.applicationIds[1]!;
  t0 = sim.clock.nowMs();
  const deploy = (outcome: string, minutes: number, triggeredBy: string, message: string) =>
    sim.scenario.deploy(serviceId, { outcome, triggeredBy, origin: "CLI", at: new Date(t0 + minutes * MINUTE), commit: { message } });
  deploy("DEPLOYMENT_ERROR", 2, HOSTILE_ACTOR, "Bump the payment SDK");
  deploy("DEPLOYMENT_ERROR", 12, FORMULA_ACTOR, "Retry the payment SDK");
  deploy("DEPLOYED", 22, "ann@example.com", "Revert the payment SDK");
  sim.scenario.deploy(otherServiceId, { outcome: "DEPLOYED", at: new Date(t0 + 5 * MINUTE) });
  sim.clock.advance(8 * MINUTE);
  await round();
  sim.clock.advance(10 * MINUTE);
  await round();
  sim.clock.advance(20 * MINUTE);
  await round();

  const items = await scanTable(DynamoDBDocumentClient.from(client), tableName);
  const alerts = (items.filter((i) => i.item_type === "alert") as unknown as AlertItem[]).filter((a) => a.detail.service?.id === serviceId);
  const byTransition = (t: string) => alerts.find((a) => a.detail.transition === t)!;
  failed = byTransition("failed");
  stillFailing = byTransition("still_failing");
  recovered = byTransition("recovered");
  serviceName = failed.detail.service!.name!;

  // Who was told: the failure was sent; the repeat was muted on that service.
  const deliverDeps: DeliverDeps = { store: notify, now: simNow, rate: { perSecond: 1, burst: 10 }, log: silent };
  await deliver(failed.detail, "prod-failures", recordingChannel("oncall"), [], deliverDeps);
  const mute: Mute = {
    id: "mute-web-1", scope: { service: serviceId }, reason: "payment migration", created_by: "ann@example.com",
    created_at: new Date(sim.clock.nowMs() - 1000).toISOString(), until: new Date(sim.clock.nowMs() + 60 * MINUTE).toISOString(),
  };
  await notify.putMute(mute);
  await deliver(stillFailing.detail, "prod-failures", recordingChannel("oncall"), [mute], deliverDeps);
  // The recovery only shown: by an onlooker (the terminal's Slack preview: nobody told), and by the
  // preview as the version before onlookers wrote it (an ordinary channel, its route name alone).
  await deliver(recovered.detail, "terminal-preview", { ...recordingChannel("preview"), onlooker: true }, [], deliverDeps);
  await deliver(recovered.detail, "terminal-preview", recordingChannel("preview-earlier"), [], deliverDeps);

  // `lookout audit --serve --port 0` on that table (as the other audit tests reach it: DYNAMODB_ENDPOINT, LOOKOUT_TABLE).
  process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint();
  process.env.LOOKOUT_TABLE = tableName;
  const dir = mkdtempSync(join(tmpdir(), "lookout-audit-web-"));
  const config = join(dir, "lookout.yaml");
  writeFileSync(config, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: ${org} }]\ndata_dir: ${dir}\n`);
  const printed = new Promise<string>((resolve) => {
    served = auditServeCommand({ config, port: "0" }, { out: (l) => resolve(l), err: (l) => resolve(l) }, { signal: stop.signal });
  });
  const line = await printed;
  url = /serving the audit trail at (\S+)/.exec(line)?.[1] ?? "";
  expect(url, line).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

  browser = await launching;
  const context = await browser.newContext({ acceptDownloads: true });
  page = await context.newPage();
  // Fail within a test's time, with the locator that did not show up.
  page.setDefaultTimeout(8_000);
  page.on("pageerror", (err) => {
    throw err;
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  stop.abort();
  if (served) expect(await served).toBe(0);
  await sim?.close();
  client?.destroy();
});

/** DynamoDB Local on shared cores answers in tens of milliseconds, sometimes seconds: wait up to ten. */
// Generous: it returns as soon as the page shows it, and CI runs this beside the suite's heaviest files.
const eventually = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 30_000 });
const rowIds = () => page.locator("#rows tbody tr").evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-id")));

// The server starts in the browser test's set-up, so the two are skipped together where there is no Chromium.
describe.skipIf(!CHROMIUM)("lookout audit --serve and its Host header", () => {
  it("refuses a request naming another host (a DNS-rebinding page), and answers this machine's names", async () => {
    const { port } = new URL(url);
    const status = (host: string) =>
      new Promise<number>((ok, fail) => {
        request({ host: "127.0.0.1", port, path: "/events", headers: { host } }, (res) => (res.resume(), ok(res.statusCode ?? 0))).on("error", fail).end();
      });
    expect(await status("evil.example")).toBe(403);
    expect(await status(`evil.example:${port}`)).toBe(403);
    expect(await status(`127.0.0.1:${port}`)).toBe(200);
    expect(await status(`localhost:${port}`)).toBe(200);
  });
});

describe.skipIf(!CHROMIUM)("the audit web page (lookout audit --serve) in Chromium", () => {
  it("lists newest first, filters by a service given by its name, and pages with the cursor", async () => {
    await page.goto(url);
    await eventually(() => page.locator("#status").textContent()).toMatch(/\d+ rows?/);
    const all = await rowIds();
    expect(all).toContain(failed.alert_id);

    await page.fill("input[name=service]", serviceName);
    await page.click("button[type=submit]");
    await eventually(() => page.url()).toContain(`service=${serviceId}`);
    await eventually(() => page.locator("#status").textContent()).toMatch(/\d+ rows?/);
    const wheres = await page.locator("#rows tbody tr td:nth-child(6)").allTextContents();
    expect(wheres.length).toBeGreaterThan(3);
    for (const w of wheres) expect(w).toContain(serviceName);
    const times = await page.locator("#rows tbody td.time").allTextContents();
    expect([...times].sort().reverse()).toEqual(times);
    const filtered = await rowIds();
    expect(filtered).toEqual(expect.arrayContaining([failed.alert_id, stillFailing.alert_id, recovered.alert_id]));

    // Two a page: every row once, in the same order, then back to the first page.
    await page.goto(`${url}?service=${serviceId}&limit=2`);
    await eventually(() => page.locator("#page-label").textContent()).toBe("page 1");
    const paged: Array<string | null> = [];
    for (;;) {
      await eventually(() => page.locator("#status").textContent()).toMatch(/rows?/);
      paged.push(...(await rowIds()));
      if (await page.locator("#older").isDisabled()) break;
      const label = await page.locator("#page-label").textContent();
      await page.click("#older");
      await eventually(() => page.locator("#page-label").textContent()).not.toBe(label);
    }
    expect(paged).toEqual(filtered);
    await page.click("#newer");
    await eventually(() => page.locator("#page-label").textContent()).not.toBe(`page ${Math.ceil(filtered.length / 2)}`);
  });

  it("shows platform text as text, never as markup", async () => {
    await page.goto(`${url}?service=${serviceId}`);
    await eventually(() => page.locator("#status").textContent()).toMatch(/\d+ rows?/);
    const actors = await page.locator("#rows tbody tr td:nth-child(7)").allTextContents();
    expect(actors).toContain(HOSTILE_ACTOR);
    expect(await page.locator("#rows img").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  });

  it("answers a bad filter with the API's message, naming the field", async () => {
    await page.goto(url);
    await page.fill("input[name=commit]", "xyz");
    await page.click("button[type=submit]");
    await eventually(() => page.locator("#status").textContent()).toMatch(/^commit: "xyz" is not a commit id/);
    expect(await page.locator("input[name=commit]").getAttribute("aria-invalid")).toBe("true");
  });

  it("says who was told and why not: sent to one receiver, muted for the next alert", async () => {
    await page.goto(`${url}?service=${serviceId}&type=alert`);
    await page.locator(`#rows tr[data-id="${failed.alert_id}"] button.explain`).click();
    const panel = page.locator("#panel");
    await eventually(() => panel.locator(`article[data-alert="${failed.alert_id}"] .verdict`).textContent()).toBe("→ told: slack #oncall (route prod-failures)");
    expect(await panel.locator(`article[data-alert="${failed.alert_id}"] tr.delivery td`).allTextContents()).toEqual(
      expect.arrayContaining(["prod-failures", "slack #oncall", "sent", "1"]),
    );

    await page.locator(`#rows tr[data-id="${stillFailing.alert_id}"] button.explain`).click();
    const muted = panel.locator(`article[data-alert="${stillFailing.alert_id}"]`);
    await eventually(() => muted.locator(".verdict").textContent()).toBe(
      "→ nobody was told: not slack #oncall (route prod-failures): muted by ann@example.com: payment migration",
    );
    expect(await muted.locator("tr.delivery td").last().textContent()).toMatch(/^mute: .*mute mute-web-1 by ann@example\.com until .*: payment migration$/);
  });

  it("says an onlooker's delivery told nobody, and reads the terminal preview's of the earlier format so", async () => {
    await page.goto(`${url}?service=${serviceId}&type=alert`);
    const row = page.locator(`#rows tr[data-id="${recovered.alert_id}"]`);
    await eventually(() => row.locator("td.told").textContent())
      .toBe("slack #preview shown (preview; nobody told); slack #preview-earlier shown (preview; nobody told)");
    await row.locator("button.explain").click();
    await eventually(() => page.locator(`#panel article[data-alert="${recovered.alert_id}"] .verdict`).textContent())
      .toBe("→ nobody was told: shown in slack #preview (preview; nobody told); shown in slack #preview-earlier (preview; nobody told)");
  });

  it("draws an incident: its alerts in time order, from the one that opened it", async () => {
    await page.goto(`${url}?service=${serviceId}&type=alert`);
    await page.locator(`#rows tr[data-id="${recovered.alert_id}"] button.incident`).click();
    await eventually(() => page.locator("#panel-title").textContent()).toBe(`Incident opened by alert ${failed.alert_id}`);
    const steps = page.locator("#panel ol.timeline li");
    expect(await steps.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-alert")))).toEqual([failed.alert_id, stillFailing.alert_id, recovered.alert_id]);
    expect(await steps.locator("strong").allTextContents()).toEqual(["failed", "still_failing", "recovered"]);
    expect(await steps.first().locator(".verdict").textContent()).toBe("→ told: slack #oncall (route prod-failures)");
  });

  it("draws the delivery report of the time and service filters as uPlot charts, with a line per service", { timeout: 90_000 }, async () => {
    // By hand (each deployment takes 2 minutes): the first service failed at +4 and +14 and deployed at
    // +24 — 2 failures of 3, one incident from +4 to +24 (20 minutes); the second deployed at +7. In the
    // day: 2 successful deployments (14 a week), 2 failed of 4 (50 %), one restore of 20 minutes.
    const day = new Date(t0).toISOString().slice(0, 10);
    const next = new Date(t0 + 1440 * MINUTE).toISOString().slice(0, 10);
    // Nothing uPlot does is refused by the page's Content-Security-Policy (a refusal is a console error).
    const errors: string[] = [];
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === "error") errors.push(m.text());
    };
    page.on("console", onConsole);
    await page.goto(`${url}?from=${day}&to=${next}`);
    await page.click("#report");
    const delivery = page.locator("#delivery");
    await eventually(() => delivery.isVisible()).toBe(true);
    const value = (name: string) => delivery.locator(`[data-figure="${name}"] .value`).textContent();
    expect(await value("Deployment frequency")).toBe("14 a week (2 in 1 day)");
    expect(await value("Change failure rate")).toBe("50 % (2 of 4)");
    expect(await value("Time to restore")).toBe("median 20m, p90 20m (1)");
    expect(await value("Lead time for changes")).toMatch(/^median .+, p90 .+ \(2\)$/);
    // Four charts, drawn by uPlot on its canvases, each with something drawn on it.
    expect(await page.evaluate(() => typeof (globalThis as { uPlot?: unknown }).uPlot)).toBe("function");
    expect(await delivery.locator(".figure .uplot canvas").count()).toBe(4);
    const inked = await delivery.locator(".figure .uplot canvas").evaluateAll((canvases) =>
      canvases.map((el) => {
        type Canvas = { width: number; height: number; getContext(kind: "2d"): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } };
        const c = el as unknown as Canvas;
        const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
        return n;
      }),
    );
    for (const n of inked) expect(n).toBeGreaterThan(50);
    const row = delivery.locator(`#delivery-services tr[data-service="${serviceId}"] td`);
    expect(await row.nth(4).textContent()).toBe("66.7 % (2 of 3)");
    expect(await row.nth(5).textContent()).toBe("20m");
    expect(await delivery.locator(`#delivery-services tr[data-service="${otherServiceId}"] td`).nth(2).textContent()).toBe("1 (7 a week)");
    expect(await delivery.locator("#delivery-csv").getAttribute("href")).toContain("report?from=");
    page.off("console", onConsole);
    expect(errors).toEqual([]);

    // The service filter, by name: that service alone.
    await page.fill("input[name=service]", serviceName);
    await page.click("#report");
    await eventually(() => value("Change failure rate")).toBe("66.7 % (2 of 3)");
    expect(await delivery.locator("#delivery-services tbody tr").count()).toBe(1);

    // A bad time: the API's message, the field marked.
    await page.fill("input[name=from]", "");
    await page.fill("input[name=to]", "");
    await page.fill("input[name=since]", "soon");
    await page.click("#report");
    await eventually(() => page.locator("#status").textContent()).toMatch(/^since: "soon" is not a duration/);
    expect(await page.locator("input[name=since]").getAttribute("aria-invalid")).toBe("true");
  });

  it("reads at 1280 px: ids whole, no part broken, the summary in the room left; nothing the page asks for is missing or blocked", async () => {
    const missing: string[] = [];
    const onResponse = (r: { status(): number; url(): string }) => {
      if (r.status() === 404) missing.push(r.url());
    };
    // A blocked load (the icon, against the page's Content-Security-Policy) is a console error, not a 404.
    const errors: string[] = [];
    const onConsole = (m: { type(): string; text(): string }) => {
      if (m.type() === "error") errors.push(m.text());
    };
    page.on("response", onResponse);
    page.on("console", onConsole);
    try {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto(url);
      await eventually(() => page.locator("#status").textContent()).toMatch(/\d+ rows?/);
      const cells = await page.locator("#rows tbody code.id").evaluateAll((codes) =>
        codes.map((c) => {
          const box = c.getBoundingClientRect();
          const style = c.ownerDocument.defaultView!.getComputedStyle(c);
          return {
            text: c.textContent,
            id: c.closest("tr")!.getAttribute("data-id"),
            title: c.getAttribute("title"),
            height: box.height,
            lineHeight: parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.4,
            shown: c.clientWidth,
            needed: c.scrollWidth,
            summaryWidth: c.closest("tr")!.querySelector("td.summary")!.getBoundingClientRect().width,
          };
        }),
      );
      expect(cells.length).toBeGreaterThan(3);
      expect(cells.some((c) => !c.id!.includes(":") && c.height < c.lineHeight * 1.5), "a uuid id on one line").toBe(true);
      // Nothing pushed past the window's right edge.
      expect(await page.locator("html").evaluate((html) => html.scrollWidth)).toBeLessThanOrEqual(1280);
      for (const c of cells) {
        // The whole id, each part on one line (an execution id may break at its colon, nowhere else);
        // where the cell is narrower than a part, its title shows the id whole.
        expect(c.text).toBe(c.id);
        const parts = c.id!.split(":").length;
        expect(c.height, `${c.id} breaks inside a part`).toBeLessThan(c.lineHeight * (parts + 0.5));
        if (c.needed > c.shown) expect(c.title, `${c.id} is cut with no way to see it whole`).toBe(c.id);
        // The summary has room for some twenty characters a line, not two.
        expect(c.summaryWidth).toBeGreaterThan(150);
      }
    } finally {
      page.off("response", onResponse);
      page.off("console", onConsole);
    }
    expect(missing).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("exports the shown filter as CSV: the API's columns, formulas guarded", async () => {
    await page.goto(`${url}?service=${serviceId}`);
    await eventually(() => page.locator("#status").textContent()).toMatch(/\d+ rows?/);
    const shown = await rowIds();
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
    expect(download.suggestedFilename()).toBe("lookout-audit.csv");
    const csv = readFileSync((await download.path())!, "utf8");
    const lines = csv.split("\r\n");
    expect(lines[0]).toBe("at,type,kind,id,status,transition,severity,organization,project,environment,service,cluster,webhook,actor,commit,state,suppression,told,summary");
    expect(lines.at(-1)).toBe("");
    for (const id of shown) expect(csv).toContain(`,${id},`);
    expect(lines.filter((l) => /^\d{4}-/.test(l))).toHaveLength(shown.length);
    // Quoted as RFC 4180 says; the formula gets a leading quote, so a spreadsheet shows it as text.
    expect(csv).toContain(`,"${HOSTILE_ACTOR.replace(/"/g, '""')}",`);
    expect(csv).toContain(`,"'${FORMULA_ACTOR.replace(/"/g, '""')}",`);
    expect(csv).not.toMatch(/(^|,)"?[=+@-]/m);
    expect(await page.locator("#status").textContent()).toBe("saved lookout-audit.csv");
  });
});
