/**
 * Deployments as state machines (DESIGN.md, "Sources and their semantics"). Each execution keeps its
 * last status and each service whether it is failing; a change of status yields at most one
 * transition. Pure: the store applies the decision with conditional writes, so however often or however
 * concurrently an execution is read, one transition is recorded once.
 */
import type { DeploymentTransition } from "../alerts/event.js";
import type { DeploymentObservation } from "./normalize.js";
import { classifyStatus } from "./status.js";

export interface ExecutionState {
  status: string;
  /** Optimistic-locking counter of the execution item. */
  version: number;
  first_seen_at: string;
  first_seen_status: string;
}

export interface ServiceState {
  failing: boolean;
  /** Failures in a row, the one that opened the incident included. */
  failure_count: number;
  /** The alert that opened the current incident: follow-ups thread under it. */
  incident_id?: string;
  /** created_at of the execution that last changed the service's health, to ignore older news. */
  last_change_created_at?: string;
  version: number;
}

export interface TransitionDecision {
  /** Whether the execution's stored status changes. */
  changed: boolean;
  transition?: DeploymentTransition;
  /** The service state after this observation (unchanged object when nothing changes). */
  service: ServiceState;
  /** For still_failing: the count including this failure. */
  failureCount?: number;
  incidentId?: string;
}

export const emptyServiceState = (): ServiceState => ({ failing: false, failure_count: 0, version: 0 });

/** The stable id of the alert a transition raises: the same transition always gets the same id. */
export const deploymentAlertKey = (obs: DeploymentObservation) =>
  ["deployment", obs.service_id, obs.execution_id, obs.status] as const;

export function decideDeploymentTransition(
  prev: ExecutionState | undefined,
  obs: DeploymentObservation,
  svc: ServiceState,
  alertId: string,
): TransitionDecision {
  if (prev && prev.status === obs.status) return { changed: false, service: svc };
  const now = classifyStatus(obs.status);
  const before = classifyStatus(prev?.status);
  const noTransition = { changed: true, service: svc };

  if (now === "in_progress") return noTransition;
  // A terminal execution that moves to another state of the same class is news, not a new incident.
  if (prev && before === now) return noTransition;
  // News about an execution older than the one that last changed the service's health does not flip it.
  const stale =
    !!svc.last_change_created_at && !!obs.created_at && obs.created_at < svc.last_change_created_at;

  switch (now) {
    case "failure": {
      if (svc.failing) {
        const count = svc.failure_count + 1;
        return {
          changed: true, transition: "still_failing", failureCount: count, incidentId: svc.incident_id,
          service: { ...svc, failure_count: count, last_change_created_at: newest(svc.last_change_created_at, obs.created_at) },
        };
      }
      if (stale) return { changed: true, transition: "failed", failureCount: 1, incidentId: alertId, service: svc };
      return {
        changed: true, transition: "failed", failureCount: 1, incidentId: alertId,
        service: { ...svc, failing: true, failure_count: 1, incident_id: alertId, last_change_created_at: obs.created_at },
      };
    }
    case "success": {
      if (!svc.failing || stale) return noTransition;
      return {
        changed: true, transition: "recovered", incidentId: svc.incident_id, failureCount: svc.failure_count,
        service: { failing: false, failure_count: 0, version: svc.version, last_change_created_at: obs.created_at },
      };
    }
    case "cancelled":
      return { changed: true, transition: "cancelled", service: svc, incidentId: svc.failing ? svc.incident_id : undefined };
  }
}

function newest(a: string | undefined, b: string | undefined): string | undefined {
  if (!a) return b;
  if (!b) return a;
  return a > b ? a : b;
}
