/**
 * Deployments as state machines (docs/architecture.md, "Deployments as state machines"). Each execution
 * keeps its last status and each service whether it is failing; a change of status yields at most one
 * transition. Pure: the store applies the decision with conditional writes, so however often or however
 * concurrently an execution is read, one transition is recorded once.
 */
import type { DeploymentObservation } from "../model/observations.js";
import { classifyStatus } from "./deployment-status.js";
import { incidentSubject } from "../alerts/build.js";
import { instantOr, parseTimestamp, plausibleInstant } from "../model/time.js";
import { compact } from "../model/compact.js";
import type { ExecutionState, ServiceState, TransitionDecision } from "../model/transitions.js";

/** How many times the execution entered each status; states written before this was counted tell by their history. */
export function enteredCounts(prev: ExecutionState | undefined): Map<string, number> {
  if (prev?.entered) return new Map(prev.entered.map((e) => [e.status, e.times]));
  const out = new Map<string, number>();
  for (const h of prev?.history ?? []) out.set(h.status, (out.get(h.status) ?? 0) + 1);
  return out;
}

/** How many times the execution had entered `status` before this observation. */
export const timesEntered = (prev: ExecutionState | undefined, status: string): number => enteredCounts(prev).get(status) ?? 0;

/** How far ahead of Lookout's clock the platform's may run and its times still order executions as they are. */
export const ORDER_AHEAD_MS = 10 * 60_000;

/**
 * Where the execution stands in time among the service's executions: when it started; without a usable
 * start, just before the start of the entry the platform lists above it (`listedBelow`), or else when
 * Lookout first saw it (docs/platform.md, "Timestamps").
 */
export function executionOrderAt(prev: ExecutionState | undefined, obs: DeploymentObservation, observedAt?: string, listedBelow?: number): number | undefined {
  const at = obs.created_at ?? prev?.first_seen_at ?? observedAt;
  // Placed by the platform's own clock, as the entry above it is: compared with its times as they are.
  if (obs.created_at === undefined && listedBelow !== undefined) return listedBelow;
  return plausibleInstant(at, observedAt === undefined ? undefined : parseTimestamp(observedAt)?.ms)?.ms;
}

export function decideDeploymentTransition(
  prev: ExecutionState | undefined,
  obs: DeploymentObservation,
  svc: ServiceState,
  alertId: string,
  observedAt?: string,
  /** For an execution without a usable start: just before the start of an entry listed above it. */
  listedBelow?: number,
): TransitionDecision {
  if (prev && prev.status === obs.status) return { changed: false, service: svc };
  const now = classifyStatus(obs.status);
  const before = classifyStatus(prev?.status);
  const noTransition = { changed: true, service: svc };

  if (now === "in_progress") return noTransition;
  // A terminal execution that moves to another state of the same class is news, not a new incident.
  if (prev && before === now) return noTransition;
  // News about an execution older than the one that last changed the service's health does not flip it.
  // Instants, not text; a stored time that is implausible now (written before times were checked) is ignored.
  // A start further ahead of Lookout's clock than clocks drift apart counts as now: believed as it is, one
  // execution dated hours ahead would make every real one after it look older, their recovery lost. Within
  // that drift the platform's instants are compared with each other as they are. A stored one that far
  // ahead (kept before this rule) is not compared at all.
  const nowMs = observedAt === undefined ? undefined : parseTimestamp(observedAt)?.ms;
  const tooFarAhead = (ms: number | undefined) => ms !== undefined && nowMs !== undefined && ms > nowMs + ORDER_AHEAD_MS;
  const started = executionOrderAt(prev, obs, observedAt, listedBelow);
  const at = tooFarAhead(started) ? nowMs : started;
  const stored = plausibleInstant(svc.last_change_created_at, nowMs)?.ms;
  const lastChange = tooFarAhead(stored) ? undefined : stored;
  // An execution without a start is placed by Lookout's clock: a platform's time ahead of it counts as now.
  const byOurClock = obs.created_at === undefined && listedBelow === undefined && lastChange !== undefined && nowMs !== undefined ? Math.min(lastChange, nowMs) : lastChange;
  const stale = byOurClock !== undefined && at !== undefined && at < byOurClock;
  const atIso = at === undefined ? undefined : new Date(at).toISOString();
  // The incident's facts (docs/events.md, "Incidents"): opened when its failure happened, as its alert says.
  const subject = incidentSubject.deployment(obs.service_id);
  const happened = obs.updated_at ?? obs.created_at;
  const occurredAt = observedAt === undefined ? (happened ?? "") : instantOr(happened, observedAt);
  // States stored before `opened_at` was kept: when the opening execution started.
  const openedAt = svc.opened_at ?? svc.last_change_created_at ?? occurredAt;

  switch (now) {
    case "failure": {
      if (svc.failing) {
        const count = svc.failure_count + 1;
        const repeat = svc.last_failure_status === obs.status;
        return {
          changed: true, transition: "still_failing", failureCount: count, incidentId: svc.incident_id,
          incident: { subject, opened_at: openedAt, failures: count, ...(repeat ? { repeat } : {}) },
          service: { ...svc, failure_count: count, last_change_created_at: newest(lastChange, at), last_failure_status: obs.status },
        };
      }
      const opening = { subject, opened_at: occurredAt, failures: 1 };
      if (stale) return { changed: true, transition: "failed", failureCount: 1, incidentId: alertId, incident: opening, service: svc };
      return {
        changed: true, transition: "failed", failureCount: 1, incidentId: alertId, incident: opening,
        service: {
          ...svc, failing: true, failure_count: 1, incident_id: alertId, last_change_created_at: atIso,
          opened_at: occurredAt, last_failure_status: obs.status,
        },
      };
    }
    case "success": {
      // The commit it ran: what changed since is listed when a later deployment fails (lib/poll/commit-range.ts).
      const commit = stale ? undefined : obs.commit?.id;
      const ran = commit && commit !== svc.last_success_commit ? { ...svc, last_success_commit: commit } : svc;
      if (!svc.failing || stale) return ran === svc ? noTransition : { changed: true, service: ran };
      return {
        changed: true, transition: "recovered", incidentId: svc.incident_id, failureCount: svc.failure_count,
        incident: { subject, opened_at: openedAt, failures: svc.failure_count },
        service: compact({ failing: false, failure_count: 0, version: svc.version, last_change_created_at: atIso, last_success_commit: ran.last_success_commit }),
      };
    }
    case "cancelled":
      return svc.failing
        ? { changed: true, transition: "cancelled", service: svc, incidentId: svc.incident_id, incident: { subject, opened_at: openedAt, failures: svc.failure_count } }
        : { changed: true, transition: "cancelled", service: svc, incidentId: undefined };
  }
}

function newest(a: number | undefined, b: number | undefined): string | undefined {
  const ms = a === undefined ? b : b === undefined ? a : Math.max(a, b);
  return ms === undefined ? undefined : new Date(ms).toISOString();
}
