import { describe, expect, it } from "vitest";
import { isoDuration, nanoIso } from "../../../local/simulator/clock.js";
import type { Run, Service } from "../../../local/simulator/state.js";
import { historyItem, matchedEvent, planDeployment, planRestart, runStateAt, terminalDetailStatus } from "../../../local/simulator/runs.js";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");
const app: Service = { id: "a", kind: "APPLICATION", name: "api", environmentId: "e", created_at: "", updated_at: "" };
const runOf = (outcome: string, unknownEnums = false): Run => ({
  id: "r", executionId: "x", serviceId: "a", phases: planDeployment({ startMs: T0, outcome, unknownEnums }), commit: null,
  triggeredBy: "ada", origin: "GIT", buildPodName: null, notifies: true, unknownEnums,
});
const statusesOver = (run: Run, stepsMs: number[]) => stepsMs.map((t) => runStateAt(run, T0 + t)?.phase.status);

describe("deployment schedules", () => {
  it("goes QUEUED → BUILDING → DEPLOYING → outcome with the default durations", () => {
    expect(statusesOver(runOf("DEPLOYMENT_ERROR"), [-1, 0, 19_999, 20_000, 80_000, 119_999, 120_000, 10 ** 9])).toEqual([
      undefined, "QUEUED", "QUEUED", "BUILDING", "DEPLOYING", "DEPLOYING", "DEPLOYMENT_ERROR", "DEPLOYMENT_ERROR",
    ]);
  });

  it("fails during building for BUILD_ERROR and cancels through CANCELING", () => {
    expect(statusesOver(runOf("BUILD_ERROR"), [0, 20_000, 80_000])).toEqual(["QUEUED", "BUILDING", "BUILD_ERROR"]);
    expect(statusesOver(runOf("CANCELED"), [0, 20_000, 80_000, 120_000])).toEqual(["QUEUED", "BUILDING", "CANCELING", "CANCELED"]);
  });

  it("honours custom durations and rejects negative ones", () => {
    const phases = planDeployment({ startMs: T0, outcome: "DEPLOYED", durations: { queuedMs: 1000, buildingMs: 0, deployingMs: 5000 } });
    expect(phases.map((p) => [p.status, p.atMs - T0])).toEqual([["QUEUED", 0], ["BUILDING", 1000], ["DEPLOYING", 1000], ["DEPLOYED", 6000]]);
    expect(() => planDeployment({ startMs: T0, outcome: "DEPLOYED", durations: { queuedMs: -1 } })).toThrow(RangeError);
  });

  it("derives status_details from the state and passes unknown states through", () => {
    expect(terminalDetailStatus("DEPLOYED")).toBe("SUCCESS");
    expect(terminalDetailStatus("QUANTUM_ERROR")).toBe("ERROR");
    expect(terminalDetailStatus("CANCELED")).toBe("CANCELED");
    expect(terminalDetailStatus("HIBERNATED")).toBe("HIBERNATED");
    expect(planRestart(T0).map((p) => p.status)).toEqual(["RESTART_QUEUED", "RESTARTING", "RESTARTED"]);
  });

  it("renders a history item that is mutable in status and fixed in identity", () => {
    const run = runOf("DEPLOYMENT_ERROR");
    const early = historyItem(run, app, T0 + 1000)!;
    const late = historyItem(run, app, T0 + 200_000)!;
    expect(early).toMatchObject({ status: "QUEUED", total_duration: null, identifier: { execution_id: "x", service_type: "APPLICATION" } });
    expect(late).toMatchObject({
      status: "DEPLOYMENT_ERROR", total_duration: "PT2M0S",
      status_details: { action: "DEPLOY", status: "ERROR", sub_action: "NONE" },
      auditing_data: { created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:02:00.000Z" },
    });
    expect(historyItem(run, app, T0 - 1)).toBeUndefined();
    expect(historyItem({ ...run, executionId: null }, app, T0)!.identifier).not.toHaveProperty("execution_id");
  });

  it("maps runs to webhook events, with unknown values under unknownEnums", () => {
    expect(matchedEvent(runOf("DEPLOYED"), "start")).toBe("DEPLOYMENT_STARTED");
    expect(matchedEvent(runOf("DEPLOYED"), "end")).toBe("DEPLOYMENT_SUCCESSFUL");
    expect(matchedEvent(runOf("BUILD_ERROR"), "end")).toBe("DEPLOYMENT_FAILURE");
    expect(matchedEvent(runOf("CANCELED"), "end")).toBe("DEPLOYMENT_CANCELLED");
    expect(matchedEvent(runOf("QUANTUM_ERROR", true), "start")).toBe("DEPLOYMENT_HIBERNATED");
    expect(runOf("QUANTUM_ERROR", true).phases[0]!.status).toBe("HIBERNATING");
  });
});

describe("time formats", () => {
  it("prints ISO 8601 durations", () => {
    expect([0, 999, 1000, 100_000, 3_600_000, 3_725_000].map(isoDuration)).toEqual(["PT0S", "PT1S", "PT1S", "PT1M40S", "PT1H0M0S", "PT1H2M5S"]);
  });

  it("prints nanosecond timestamps", () => {
    expect(nanoIso(T0 + 123, 456_789)).toBe("2026-01-01T00:00:00.123456789Z");
    expect(nanoIso(T0, 7)).toBe("2026-01-01T00:00:00.000000007Z");
  });
});
