/**
 * Names from the platform and "what changed" on a deployment failure, polled over HTTP from the platform
 * simulator into the in-memory ingest store, with dispatch's request budget in memory (lib/poll/platform-names.ts,
 * lib/poll/commit-range.ts, lib/poll/readers/deployment-history.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pollSource, type PollDeps } from "../../../lib/poll/poll.js";
import { spareRequestsOf } from "../../../lib/dispatch/spare-requests.js";
import { newBudget, spend } from "../../../lib/dispatch/budget.js";
import { CHANGE_NOTES } from "../../../lib/poll/commit-range.js";
import { NAMES_FRESH_MS } from "../../../lib/poll/platform-names.js";
import { changesAlertId } from "../../../lib/alerts/changes-listed.js";
import { MemoryIngestStore } from "../../support/memory-ingest-store.js";
import { MemoryDispatchStore } from "../../../lib/store/memory/dispatch-store.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import type { SourceRef } from "../../../lib/model/source.js";
import { createPlatformClient } from "../../../lib/platform/client.js";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import type { PhaseDurations } from "../../../local/simulator/runs.js";

const MIN = 60_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");
const INSTANT: PhaseDurations = { queuedMs: 0, buildingMs: 0, deployingMs: 0 };
const DISPATCH = "default";

let sim: Simulator;
let store: MemoryIngestStore;
let dispatch: MemoryDispatchStore;
let raised: LookoutEventDetail[];
/** Commit requests sent when each alert was told. */
let commitCallsAtAlert: number[];
let deps: PollDeps;
let app: SourceRef;

beforeEach(async () => {
  sim = await startSimulator({ startTime: new Date(T0).toISOString(), size: { applications: 1, clusters: 0, webhooks: 0, pastDeployments: 0 } });
  const { organizationId, applicationIds, projectId } = sim.ids;
  app = { kind: "deployment", organizationId, id: applicationIds[0]! };
  const now = () => sim.clock.now();
  store = new MemoryIngestStore({ retentionMs: 90 * 86_400_000, now });
  dispatch = new MemoryDispatchStore();
  raised = [];
  commitCallsAtAlert = [];
  deps = {
    client: createPlatformClient({ baseUrl: sim.url, token: sim.apiToken, auth: "token", sleep: async () => {} }),
    store, now, backfillWindowMs: 15 * MIN, log: { info() {}, warn() {}, error() {} },
    // The project is known by id alone (as from a webhook payload without names): its name comes from the platform.
    configured: new Map([[app.id, { project: { id: projectId } }]]),
    spare: spareRequestsOf(dispatch, DISPATCH, () => sim.clock.nowMs()),
    onAlert: (detail) => {
      raised.push(detail);
      commitCallsAtAlert.push(calls("listApplicationCommits"));
    },
  };
});
afterEach(() => sim.close());

const poll = () => pollSource({ source: app }, deps);
const calls = (endpoint: string) => sim.requestLog.filter((e) => e.endpoint === endpoint).length;
const deploy = (outcome: string) => sim.scenario.deploy(app.id, { outcome, durations: INSTANT });
const commitOf = (exec: string) => sim.model.runsByService.get(app.id)!.find((r) => r.executionId === exec)!.commit!.git_commit_id!;
/** The budget has no room left this hour. */
const exhaustBudget = () => dispatch.update(DISPATCH, () => ({ budget: spend(newBudget(1000, T0), 5000, T0), sources: {} }));

describe("what changed, on a deployment failure", () => {
  it("raises the failure's alert, then an amendment listing the commits since the last success", async () => {
    await poll();
    const good = commitOf(deploy("DEPLOYED"));
    await poll();
    sim.clock.advance(MIN);
    const pushed = sim.scenario.pushCommits(app.id, 6).map((c) => c.git_commit_id);
    const bad = commitOf(deploy("DEPLOYMENT_ERROR"));
    const r = await poll();

    expect(raised.map((d) => d.transition)).toEqual(["failed", "changes_listed"]);
    const [failure, amendment] = raised as [LookoutEventDetail, LookoutEventDetail];
    expect(commitCallsAtAlert).toEqual([0, 1]); // the failure was stored and told before the commits were asked for
    expect(amendment).toMatchObject({
      id: changesAlertId(failure.id), kind: "deployment", amends: failure.id, incident_id: failure.id, severity: failure.severity,
      service: failure.service, project: { id: sim.ids.projectId, name: "shop" }, record: failure.record,
    });
    expect(amendment.deployment?.changes).toMatchObject({ since_commit: good, until_commit: bad, total: 7 });
    expect(amendment.deployment?.changes?.more).toBeUndefined();
    expect(amendment.deployment?.changes?.commits.map((c) => c.id)).toEqual([bad, ...pushed.slice(0, 4)]);
    expect(r).toMatchObject({ ok: true, alerts: 2, requests: 2 }); // the page and the commits; names are fresh
    // Both in the outbox, the amendment once however often the failure is read again.
    await poll();
    await poll();
    expect(raised).toHaveLength(2);
    expect(store.scan().filter((i) => i.item_type === "alert").map((i) => i.alert_id)).toEqual(expect.arrayContaining([failure.id, amendment.id]));
    expect(calls("listApplicationCommits")).toBe(1);
  });

  it("reads an application's commits once a poll, however many of its failures the poll raised", async () => {
    await poll();
    const good = commitOf(deploy("DEPLOYED"));
    await poll();
    sim.clock.advance(MIN);
    const first = commitOf(deploy("BUILD_ERROR"));
    sim.clock.advance(1000);
    const second = commitOf(deploy("DEPLOYMENT_ERROR"));
    raised = [];
    await poll();
    expect(raised.map((d) => d.transition)).toEqual(["failed", "still_failing", "changes_listed", "changes_listed"]);
    expect(raised.slice(2).map((d) => [d.amends, d.incident_id, d.deployment?.changes?.since_commit, d.deployment?.changes?.until_commit]))
      .toEqual([[raised[0]!.id, raised[0]!.id, good, first], [raised[1]!.id, raised[0]!.id, good, second]]);
    expect(raised[3]!.deployment?.changes?.commits.map((c) => c.id)).toEqual([second, first]);
    expect(calls("listApplicationCommits")).toBe(1);
  });

  it("a short budget lists no commits and says why; no earlier success is said without asking", async () => {
    await poll();
    deploy("BUILD_ERROR");
    await poll();
    expect(raised.map((d) => [d.transition, d.deployment?.changes?.note])).toEqual([["failed", undefined], ["changes_listed", CHANGE_NOTES.noEarlierSuccess]]);

    sim.clock.advance(MIN);
    deploy("DEPLOYED");
    await poll();
    sim.clock.advance(MIN);
    await exhaustBudget();
    deploy("DEPLOYMENT_ERROR");
    raised = [];
    const r = await poll();
    expect(raised.map((d) => d.transition)).toEqual(["failed", "changes_listed"]);
    expect(raised[1]!.deployment?.changes).toMatchObject({ commits: [], total: 0, note: CHANGE_NOTES.budgetShort });
    expect(r.requests).toBe(1);
    expect(calls("listApplicationCommits")).toBe(0);
  });

  it("a commit list that cannot be read leaves the failure's alert as it is and says so", async () => {
    await poll();
    deploy("DEPLOYED");
    await poll();
    sim.faults.set("listApplicationCommits", { status: 500 });
    deploy("DEPLOYMENT_ERROR");
    const r = await poll();
    expect(r).toMatchObject({ ok: true, alerts: 2 });
    expect(raised.at(-1)!.deployment?.changes?.note).toBe(CHANGE_NOTES.unavailable("server_error"));
    expect(r.requests).toBe(5); // the page, and four attempts at the commits
  });
});

describe("names from the platform", () => {
  it("names the project and who triggered it, caches them, and reads them again only when stale, counted in the poll's cost", async () => {
    await poll();
    expect(calls("listProjects")).toBe(0); // nothing ended: no names needed
    deploy("BUILD_ERROR");
    const first = await poll();
    expect(first.requests).toBe(3); // the page, projects, members
    expect(raised[0]).toMatchObject({
      project: { id: sim.ids.projectId, name: "shop" },
      deployment: { triggered_by: "ada@example.test", triggered_by_name: "Ada Lovelace" },
    });

    sim.clock.advance(MIN);
    deploy("DEPLOYED");
    expect((await poll()).requests).toBe(1);
    expect([calls("listProjects"), calls("listOrganizationMembers")]).toEqual([1, 1]);
    expect(raised.at(-1)!.deployment?.triggered_by_name).toBe("Ada Lovelace");

    sim.clock.advance(NAMES_FRESH_MS);
    deploy("DEPLOYMENT_ERROR");
    expect((await poll()).requests).toBe(4); // names again, and the commits
    expect([calls("listProjects"), calls("listOrganizationMembers")]).toEqual([2, 2]);
  });

  it("a short budget keeps the names known, stale, and asks nothing", async () => {
    await poll();
    await exhaustBudget();
    deploy("BUILD_ERROR");
    expect((await poll()).requests).toBe(1);
    expect(calls("listProjects")).toBe(0);
    expect(raised[0]!.project).toEqual({ id: sim.ids.projectId });
    expect(raised[0]!.deployment?.triggered_by_name).toBeUndefined();
  });
});
