import { describe, expect, it } from "vitest";
import { decideDeploymentTransition, timesEntered } from "../../../lib/poll/transitions.js";
import { emptyServiceState } from "../../../lib/model/transitions.js";
import type { ExecutionState, ServiceState } from "../../../lib/model/transitions.js";
import { deploymentAlertId, deploymentDetail } from "../../../lib/alerts/build.js";
import { contentHash } from "../../../lib/model/hash.js";
import type { DeploymentObservation } from "../../../lib/model/observations.js";
import { classifyStatus } from "../../../lib/poll/deployment-status.js";
import { startsListedAbove } from "../../../lib/poll/readers/deployment-history.js";

const obs = (status: string, exec = "e1", created_at = "2026-01-01T00:00:00Z"): DeploymentObservation => ({
  record_kind: "deployment", organization_id: "o", application_id: "a", service_id: "s", execution_id: exec,
  execution_id_derived: false, status, created_at,
});
const prev = (status: string): ExecutionState => ({ status, version: 1, first_seen_at: "t", first_seen_status: status });
const failing: ServiceState = { failing: true, failure_count: 1, incident_id: "first", version: 3, last_change_created_at: "2026-01-01T00:00:00Z" };

describe("status classes", () => {
  it("classifies by rule, including states the spec does not list", () => {
    expect(classifyStatus("DEPLOYMENT_ERROR")).toBe("failure");
    expect(classifyStatus("QUANTUM_ERROR")).toBe("failure");
    expect(classifyStatus("DEPLOYED")).toBe("success");
    expect(classifyStatus("RESTARTED")).toBe("success");
    expect(classifyStatus("CANCELED")).toBe("cancelled");
    expect(classifyStatus("BUILDING")).toBe("in_progress");
    expect(classifyStatus("HIBERNATING")).toBe("in_progress");
  });
});

describe("deployment transitions", () => {
  it("records no change when the status is the same", () => {
    expect(decideDeploymentTransition(prev("BUILDING"), obs("BUILDING"), emptyServiceState(), "x").changed).toBe(false);
  });

  it("records progress without an alert", () => {
    const d = decideDeploymentTransition(prev("QUEUED"), obs("BUILDING"), emptyServiceState(), "x");
    expect(d).toMatchObject({ changed: true });
    expect(d.transition).toBeUndefined();
  });

  it("raises failed on the way into an error state, opening an incident", () => {
    const d = decideDeploymentTransition(prev("DEPLOYING"), obs("DEPLOYMENT_ERROR"), emptyServiceState(), "alert-1");
    expect(d.transition).toBe("failed");
    expect(d.service).toMatchObject({ failing: true, failure_count: 1, incident_id: "alert-1" });
  });

  it("raises failed for an execution first seen already in error", () => {
    expect(decideDeploymentTransition(undefined, obs("BUILD_ERROR"), emptyServiceState(), "a").transition).toBe("failed");
  });

  it("raises still_failing with a count for a further failure, threaded to the first", () => {
    const d = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "e2", "2026-01-01T01:00:00Z"), failing, "a2");
    expect(d).toMatchObject({ transition: "still_failing", failureCount: 2, incidentId: "first" });
    expect(d.service.failure_count).toBe(2);
  });

  describe("times ahead of Lookout's clock", () => {
    const T = Date.parse("2026-03-02T10:00:00Z");
    const at = (ms: number) => new Date(ms).toISOString();
    const MIN = 60_000;

    it("a platform a few minutes ahead still orders its executions by their own times: older news changes nothing", () => {
      // The platform's clock 5 minutes ahead: B (the newer) fails, seen first; A (older) succeeds, seen later.
      const b = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "b", at(T + 4 * MIN)), emptyServiceState(), "b-1", at(T));
      expect(b.transition).toBe("failed");
      const a = decideDeploymentTransition(undefined, obs("DEPLOYED", "a", at(T + 2 * MIN)), b.service, "a-1", at(T + MIN));
      expect(a.transition).toBeUndefined();
      expect(a.service.failing).toBe(true);
    });

    it("one dated hours ahead counts as when it was seen: the real executions after it are not taken for older", () => {
      const future = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "f", at(T + 120 * MIN)), emptyServiceState(), "f-1", at(T));
      expect(future.transition).toBe("failed");
      expect(Date.parse(future.service.last_change_created_at!)).toBe(T);
      const ok = decideDeploymentTransition(undefined, obs("DEPLOYED", "ok", at(T + 3 * MIN)), future.service, "ok-1", at(T + 5 * MIN));
      expect(ok.transition).toBe("recovered");
    });

    it("an execution without a start, placed by Lookout's clock, is not taken for older than a platform a few minutes ahead", () => {
      const b = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "b", at(T + 4 * MIN)), emptyServiceState(), "b-1", at(T));
      const timeless: DeploymentObservation = { ...obs("DEPLOYED", "c"), created_at: undefined };
      const c = decideDeploymentTransition(undefined, timeless, b.service, "c-1", at(T + MIN));
      expect(c.transition).toBe("recovered");
    });

    it("an execution without a start listed below the failure is no newer than it: no recovery; listed above, it recovers", () => {
      const b = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "b", at(T - 2 * MIN)), emptyServiceState(), "b-1", at(T));
      const timeless: DeploymentObservation = { ...obs("DEPLOYED", "old"), created_at: undefined };
      const below = decideDeploymentTransition(undefined, timeless, b.service, "old-1", at(T + MIN), T - 2 * MIN - 1);
      expect(below.transition).toBeUndefined();
      expect(below.service.failing).toBe(true);
      expect(decideDeploymentTransition(undefined, timeless, b.service, "old-1", at(T + MIN)).transition).toBe("recovered");
      const timelessOf = (o: DeploymentObservation) => ({ ...o, created_at: o.created_at === "bad" ? undefined : o.created_at });
      expect(startsListedAbove([obs("DEPLOYED", "new", "bad"), obs("DEPLOYMENT_ERROR", "b", at(T - 2 * MIN)), obs("DEPLOYED", "old", "bad"), obs("DEPLOYED", "old", "bad")].map(timelessOf), T))
        .toEqual(new Map([[JSON.stringify(["s", "old"]), T - 2 * MIN - 1]]));
      // The earliest start above, not the nearest: a stray date ahead below the failure does not lift the bound past it.
      expect(startsListedAbove([obs("DEPLOYMENT_ERROR", "b", at(T - 5 * MIN)), obs("DEPLOYED", "stray", at(T + 3 * 60 * MIN)), obs("DEPLOYED", "c", "bad")].map(timelessOf), T))
        .toEqual(new Map([[JSON.stringify(["s", "c"]), T - 5 * MIN - 1]]));
      // Listed twice, first at the top: its highest place has nothing above it, so nothing bounds it.
      expect(startsListedAbove([obs("DEPLOYED", "new", "bad"), obs("DEPLOYMENT_ERROR", "b", at(T - 2 * MIN)), obs("DEPLOYED", "new", "bad")].map(timelessOf), T)).toEqual(new Map());
    });

    it("a platform a few minutes ahead: an old entry without a start below its failure is placed on the platform's clock, not ours", () => {
      // The failure started at T+3m by the platform's clock, seen at T; a minute later an old success below it is read for the first time.
      const b = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "b", at(T + 3 * MIN)), emptyServiceState(), "b-1", at(T));
      const old: DeploymentObservation = { ...obs("DEPLOYED", "old"), created_at: undefined };
      const d = decideDeploymentTransition(undefined, old, b.service, "old-1", at(T + MIN), T + 3 * MIN - 1);
      expect(d.transition).toBeUndefined();
      expect(d.service.failing).toBe(true);
    });

    it("a stored time that far ahead (kept before this rule) is not compared: the recovery is seen", () => {
      const stuck: ServiceState = { ...failing, last_change_created_at: at(T + 120 * MIN) };
      const ok = decideDeploymentTransition(undefined, obs("DEPLOYED", "ok", at(T - 2 * MIN)), stuck, "ok-1", at(T));
      expect(ok.transition).toBe("recovered");
    });
  });

  it("raises recovered on the first success after a failure, closing the incident", () => {
    const d = decideDeploymentTransition(prev("DEPLOYING"), obs("DEPLOYED", "e3", "2026-01-01T02:00:00Z"), failing, "a3");
    expect(d).toMatchObject({ transition: "recovered", incidentId: "first" });
    expect(d.service.failing).toBe(false);
  });

  it("raises nothing for a success when nothing was failing", () => {
    const d = decideDeploymentTransition(prev("DEPLOYING"), obs("DEPLOYED"), emptyServiceState(), "a");
    expect(d.transition).toBeUndefined();
  });

  it("raises cancelled and leaves the service's health alone", () => {
    const d = decideDeploymentTransition(prev("BUILDING"), obs("CANCELED"), failing, "a");
    expect(d.transition).toBe("cancelled");
    expect(d.service).toBe(failing);
  });

  it("does not recover from an older execution's success", () => {
    const d = decideDeploymentTransition(undefined, obs("DEPLOYED", "old", "2025-12-31T00:00:00Z"), failing, "a");
    expect(d.transition).toBeUndefined();
  });

  it("treats a move between two error states as news, not a new incident", () => {
    const d = decideDeploymentTransition(prev("BUILD_ERROR"), obs("DEPLOYMENT_ERROR"), failing, "a");
    expect(d.changed).toBe(true);
    expect(d.transition).toBeUndefined();
  });
});

describe("exact identity", () => {
  it("gives the first occurrence the id it always had, and each later one its own", () => {
    const o = obs("DEPLOYMENT_ERROR");
    expect(deploymentAlertId(o)).toBe(contentHash("deployment", "s", "e1", "DEPLOYMENT_ERROR"));
    expect(deploymentAlertId(o, 1)).toBe(deploymentAlertId(o));
    const ids = new Set([1, 2, 3].map((n) => deploymentAlertId(o, n)));
    expect(ids.size).toBe(3);
    // Another service with the same execution id is another alert.
    expect(deploymentAlertId({ ...o, service_id: "t" })).not.toBe(deploymentAlertId(o));
  });

  it("counts how often an execution entered a status, from its counts or, for older states, its history", () => {
    const counted: ExecutionState = { ...prev("BUILDING"), entered: [{ status: "DEPLOYMENT_ERROR", times: 2 }, { status: "BUILDING", times: 2 }] };
    expect(timesEntered(counted, "DEPLOYMENT_ERROR")).toBe(2);
    expect(timesEntered(counted, "DEPLOYED")).toBe(0);
    const older: ExecutionState = { ...prev("BUILDING"), history: [{ status: "DEPLOYMENT_ERROR" }, { status: "BUILDING" }] };
    expect(timesEntered(older, "DEPLOYMENT_ERROR")).toBe(1);
    expect(timesEntered(undefined, "DEPLOYMENT_ERROR")).toBe(0);
    // Status names are data, never an object's own machinery.
    expect(timesEntered({ ...prev("X"), entered: [] }, "constructor")).toBe(0);
    expect(timesEntered({ ...prev("X"), entered: [{ status: "__proto__", times: 3 }] }, "__proto__")).toBe(3);
  });

  it("makes a re-run that fails again with the same status a further failure of the incident", () => {
    const rerun: ExecutionState = { ...prev("BUILDING"), entered: [{ status: "DEPLOYMENT_ERROR", times: 1 }, { status: "BUILDING", times: 1 }] };
    const d = decideDeploymentTransition(rerun, obs("DEPLOYMENT_ERROR"), failing, "second");
    expect(d).toMatchObject({ transition: "still_failing", failureCount: 2, incidentId: "first" });
  });
});

describe("time as instants", () => {
  const seen = "2026-01-01T12:00:00.000Z";

  it("compares instants, not text: an offset does not make a later execution look older", () => {
    // 02:00+02:00 is midnight UTC: the success at 01:00Z is later and recovers.
    const svc: ServiceState = { ...failing, last_change_created_at: "2026-01-01T02:00:00+02:00" };
    const d = decideDeploymentTransition(undefined, obs("DEPLOYED", "e9", "2026-01-01T01:00:00Z"), svc, "a", seen);
    expect(d.transition).toBe("recovered");
    expect(d.service.last_change_created_at).toBe("2026-01-01T01:00:00.000Z");
  });

  it("ignores a stored time that is implausible now, so a service wedged by one recovers", () => {
    const wedged: ServiceState = { ...failing, last_change_created_at: "9999-01-01T00:00:00Z" };
    const d = decideDeploymentTransition(undefined, obs("DEPLOYED", "e9", "2026-01-01T11:00:00Z"), wedged, "a", seen);
    expect(d.transition).toBe("recovered");
    expect(d.service.last_change_created_at).toBe("2026-01-01T11:00:00.000Z");
  });

  it("orders an execution without a usable start by when Lookout first saw it", () => {
    const noStart = { ...obs("DEPLOYMENT_ERROR", "odd"), created_at: undefined, created_at_raw: "9999-01-01T00:00:00Z" };
    const opened = decideDeploymentTransition(undefined, noStart, emptyServiceState(), "odd-alert", seen);
    expect(opened.service).toMatchObject({ failing: true, last_change_created_at: seen });
    // A real execution that started after Lookout saw the odd one recovers the service...
    const after = decideDeploymentTransition(undefined, obs("DEPLOYED", "e10", "2026-01-01T12:05:00Z"), opened.service, "a", "2026-01-01T12:10:00.000Z");
    expect(after.transition).toBe("recovered");
    // ...and one that started before it is older news.
    const before = decideDeploymentTransition(undefined, obs("DEPLOYED", "e0", "2026-01-01T11:00:00Z"), opened.service, "a", "2026-01-01T12:10:00.000Z");
    expect(before.transition).toBeUndefined();
    // Re-read later, it keeps its place: when it was first seen, not when it was read again.
    const firstSeen: ExecutionState = { ...prev("BUILDING"), first_seen_at: "2026-01-01T10:00:00.000Z" };
    const later = decideDeploymentTransition(firstSeen, noStart, { ...emptyServiceState() }, "x", "2026-01-01T13:00:00.000Z");
    expect(later.service.last_change_created_at).toBe("2026-01-01T10:00:00.000Z");
  });
});

describe("detail-types", () => {
  it("exist only for real kind and transition pairs", async () => {
    const { detailTypeOf } = await import("../../../lib/model/event.js");
    expect(detailTypeOf("deployment", "still_failing")).toBe("Deployment Still Failing");
    expect(detailTypeOf("health", "token_rejected")).toBe("Lookout Health");
    expect(() => detailTypeOf("deployment", "cluster_error")).toThrow(/no detail-type/);
    expect(() => detailTypeOf("webhook_delivery", "token_rejected")).toThrow(/no detail-type/);
  });
});

describe("a service's deployment incident (docs/events.md, \"Incidents\")", () => {
  const at = "2026-01-01T05:00:00.000Z";
  const ctx = { environment: { id: "e", name: "prod", type: "PRODUCTION" } };

  it("opens when the failure happened, counts and flags a repeat of the same status, and closes with how long and what fixed it", () => {
    const failed = decideDeploymentTransition(prev("DEPLOYING"), obs("DEPLOYMENT_ERROR", "e1", "2026-01-01T01:00:00Z"), emptyServiceState(), "alert-1", at);
    expect(failed.incident).toEqual({ subject: "deployment:s", opened_at: "2026-01-01T01:00:00.000Z", failures: 1 });
    expect(failed.service).toMatchObject({ opened_at: "2026-01-01T01:00:00.000Z", last_failure_status: "DEPLOYMENT_ERROR" });

    const again = decideDeploymentTransition(undefined, obs("DEPLOYMENT_ERROR", "e2", "2026-01-01T01:10:00Z"), failed.service, "alert-2", at);
    expect(again.incident).toEqual({ subject: "deployment:s", opened_at: "2026-01-01T01:00:00.000Z", failures: 2, repeat: true });
    const other = decideDeploymentTransition(undefined, obs("BUILD_ERROR", "e3", "2026-01-01T01:20:00Z"), again.service, "alert-3", at);
    expect(other.incident).toEqual({ subject: "deployment:s", opened_at: "2026-01-01T01:00:00.000Z", failures: 3 });

    const fixed: DeploymentObservation = {
      ...obs("DEPLOYED", "e4", "2026-01-01T01:30:00Z"), updated_at: "2026-01-01T01:35:00Z", triggered_by: "dana@", origin: "GIT",
      commit: { id: "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3", author: "Dana" },
    };
    const recovered = decideDeploymentTransition(prev("DEPLOYING"), fixed, other.service, "alert-4", at);
    expect(recovered.incident).toEqual({ subject: "deployment:s", opened_at: "2026-01-01T01:00:00.000Z", failures: 3 });
    const detail = deploymentDetail({ obs: fixed, transition: "recovered", ctx, observedAt: at, incidentId: recovered.incidentId, incident: recovered.incident });
    expect(detail.incident).toEqual({
      subject: "deployment:s", opened_at: "2026-01-01T01:00:00.000Z", failures: 3, duration_sec: 35 * 60,
      resolved_by: "DEPLOYED, commit a94a8fe by Dana, triggered by dana@ via GIT",
    });
    expect(detail.severity).toBe("critical"); // its incident's (a production failure)
  });

  it("rates a failure by its environment's type: production critical, preview a warning, the rest an error", () => {
    const severity = (type?: string) =>
      deploymentDetail({ obs: obs("BUILD_ERROR"), transition: "failed", ctx: type ? { environment: { id: "e", type } } : {}, observedAt: at }).severity;
    expect([severity("PRODUCTION"), severity("PREVIEW"), severity("STAGING"), severity(undefined)]).toEqual(["critical", "warning", "error", "error"]);
  });
});
