/**
 * Deployment executions as schedules. A run's phases are fixed when it is created; its state at any
 * instant is a pure function of the clock, so advancing time needs no timers.
 */
import { iso, isoDuration } from "./clock.js";
import type { Phase, Run, Service } from "./state.js";

export interface PhaseDurations {
  queuedMs?: number;
  buildingMs?: number;
  deployingMs?: number;
}

export const DEFAULT_DURATIONS: Required<PhaseDurations> = { queuedMs: 20_000, buildingMs: 60_000, deployingMs: 40_000 };

const SUCCESS_STATES = new Set(["DEPLOYED", "RESTARTED", "DELETED", "STOPPED"]);

/** The status_details.status of a terminal state. */
export function terminalDetailStatus(state: string): string {
  if (SUCCESS_STATES.has(state)) return "SUCCESS";
  if (state.endsWith("_ERROR")) return "ERROR";
  if (state === "CANCELED") return "CANCELED";
  return state; // an unknown future state: passed through, as the platform would
}

export interface PlanInput {
  startMs: number;
  outcome: string;
  durations?: PhaseDurations;
  /** Use values outside the spec's enums for the first phase (HIBERNATING / HIBERNATE). */
  unknownEnums?: boolean;
}

/**
 * QUEUED → BUILDING → DEPLOYING → outcome. BUILD_ERROR ends after building; CANCELED goes through
 * CANCELING instead of DEPLOYING.
 */
export function planDeployment({ startMs, outcome, durations, unknownEnums }: PlanInput): Phase[] {
  const d = { ...DEFAULT_DURATIONS, ...durations };
  for (const [k, v] of Object.entries(d)) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`durations.${k} must be a number >= 0, got ${v}`);
  }
  const action = "DEPLOY";
  const phase = (status: string, atMs: number, detail: string, act = action): Phase => ({
    status, atMs, details: { action: act, status: detail, sub_action: "NONE" },
  });
  const buildAt = startMs + d.queuedMs;
  const deployAt = buildAt + d.buildingMs;
  const endAt = deployAt + d.deployingMs;
  const phases = [
    unknownEnums ? phase("HIBERNATING", startMs, "HIBERNATING", "HIBERNATE") : phase("QUEUED", startMs, "QUEUED"),
    phase("BUILDING", buildAt, "ONGOING"),
  ];
  if (outcome === "BUILD_ERROR") return [...phases, phase(outcome, deployAt, "ERROR")];
  if (outcome === "CANCELED") return [...phases, phase("CANCELING", deployAt, "CANCELING"), phase(outcome, endAt, "CANCELED")];
  return [...phases, phase("DEPLOYING", deployAt, "ONGOING"), phase(outcome, endAt, terminalDetailStatus(outcome))];
}

/** RESTART_QUEUED → RESTARTING → RESTARTED (endpoint 2). */
export function planRestart(startMs: number): Phase[] {
  const phase = (status: string, atMs: number, detail: string): Phase => ({
    status, atMs, details: { action: "RESTART", status: detail, sub_action: "NONE" },
  });
  return [phase("RESTART_QUEUED", startMs, "QUEUED"), phase("RESTARTING", startMs + 10_000, "ONGOING"), phase("RESTARTED", startMs + 40_000, "SUCCESS")];
}

export const runStart = (run: Run): number => run.phases[0]!.atMs;
export const runEnd = (run: Run): number => run.phases[run.phases.length - 1]!.atMs;

export interface RunState {
  phase: Phase;
  ended: boolean;
}

/** The state of a run at `nowMs`; undefined before it starts (scheduled runs are not visible yet). */
export function runStateAt(run: Run, nowMs: number): RunState | undefined {
  let current: Phase | undefined;
  let index = -1;
  run.phases.forEach((p, i) => {
    if (p.atMs <= nowMs) {
      current = p;
      index = i;
    }
  });
  return current && { phase: current, ended: index === run.phases.length - 1 };
}

export const serviceIconUri = (kind: string): string => `app://platform-console/${kind.toLowerCase()}`;

/** The deployment history item (endpoint 9) of a run at `nowMs`. */
export function historyItem(run: Run, service: Service, nowMs: number): Record<string, unknown> | undefined {
  const state = runStateAt(run, nowMs);
  if (!state) return undefined;
  const identifier: Record<string, unknown> = { name: service.name, service_id: service.id, service_type: service.kind };
  if (run.executionId !== null) identifier.execution_id = run.executionId;
  return {
    identifier,
    status: state.phase.status,
    auditing_data: {
      created_at: iso(runStart(run)),
      updated_at: iso(state.phase.atMs),
      triggered_by: run.triggeredBy,
      origin: run.origin,
    },
    details: { commit: run.commit, build_pod_name: run.buildPodName },
    status_details: { ...state.phase.details },
    icon_uri: serviceIconUri(service.kind),
    total_duration: state.ended ? isoDuration(runEnd(run) - runStart(run)) : null,
  };
}

/** The webhook event a run raises when it starts or ends. */
export function matchedEvent(run: Run, moment: "start" | "end"): string {
  if (moment === "start") return run.unknownEnums ? "DEPLOYMENT_HIBERNATED" : "DEPLOYMENT_STARTED";
  const final = run.phases[run.phases.length - 1]!.status;
  if (final.endsWith("_ERROR")) return "DEPLOYMENT_FAILURE";
  if (final === "CANCELED") return "DEPLOYMENT_CANCELLED";
  if (SUCCESS_STATES.has(final)) return "DEPLOYMENT_SUCCESSFUL";
  return run.unknownEnums ? "DEPLOYMENT_HIBERNATED" : "DEPLOYMENT_SUCCESSFUL";
}
