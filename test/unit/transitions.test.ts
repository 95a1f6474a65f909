import { describe, expect, it } from "vitest";
import { decideDeploymentTransition, emptyServiceState, type ExecutionState, type ServiceState } from "../../lib/ingest/transitions.js";
import type { DeploymentObservation } from "../../lib/ingest/normalize.js";
import { classifyStatus } from "../../lib/ingest/status.js";

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

describe("detail-types", () => {
  it("exist only for real kind and transition pairs", async () => {
    const { detailTypeOf } = await import("../../lib/alerts/event.js");
    expect(detailTypeOf("deployment", "still_failing")).toBe("Deployment Still Failing");
    expect(detailTypeOf("health", "token_rejected")).toBe("Lookout Health");
    expect(() => detailTypeOf("deployment", "cluster_error")).toThrow(/no detail-type/);
    expect(() => detailTypeOf("webhook_delivery", "token_rejected")).toThrow(/no detail-type/);
  });
});
