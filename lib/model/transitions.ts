/**
 * The state a deployment execution and its service keep between observations, and what one observation
 * decides (lib/ingest/transitions.ts decides; the ingest store applies it with conditional writes).
 */
import type { DeploymentTransition } from "./event.js";

export interface ExecutionState {
  status: string;
  /** Optimistic-locking counter of the execution item. */
  version: number;
  first_seen_at: string;
  first_seen_status: string;
  /**
   * How many times the execution entered each status (a re-run can fail again with the same status).
   * A list, not a map keyed by status: the marshaller loses a key such as `__proto__`.
   */
  entered?: Array<{ status: string; times: number }>;
  /** Older states have no `entered`: their history tells (all of it, unless it was trimmed). */
  history?: Array<{ status: string }>;
}

export interface ServiceState {
  failing: boolean;
  /** Failures in a row, the one that opened the incident included. */
  failure_count: number;
  /** The alert that opened the current incident: follow-ups thread under it. */
  incident_id?: string;
  /**
   * When the execution that last changed the service's health started (a UTC instant; when Lookout
   * first saw it if the platform's time was unusable), to ignore older news.
   */
  last_change_created_at?: string;
  /** The commit of the service's last successful deployment: what changed since is listed on a failure. */
  last_success_commit?: string;
  version: number;
}

/** A service never stored: not failing, version 0 (the store writes it on condition that none exists). */
export const emptyServiceState = (): ServiceState => ({ failing: false, failure_count: 0, version: 0 });

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
