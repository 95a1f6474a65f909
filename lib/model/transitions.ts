/**
 * The state a deployment execution and its service keep between observations, and what one observation
 * decides (lib/poll/transitions.ts decides; the ingest store applies it with conditional writes).
 */
import type { DeploymentTransition, IncidentFacts, LookoutEventDetail } from "./event.js";
import type { Instant } from "./time.js";

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
  /** When the current incident's first failure happened (its opening alert's `occurred_at`). */
  opened_at?: string;
  /** The status of the incident's last failure: a still_failing with the same status is a repeat. */
  last_failure_status?: string;
  /**
   * A failure of the current incident was published (not kept quiet as backfill): its close is news
   * even when read after an outage, or the message people saw would never turn resolved.
   */
  told?: boolean;
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
  /** Where the transition stands in the service's incident; a close's duration and cause are the builder's. */
  incident?: IncidentFacts;
}

/**
 * A webhook target's or a cluster's incident state (lib/poll/incidents.ts folds records into it), one
 * item per subject (`webhook:<webhook>:<host>`, `cluster:<cluster>`).
 */
export interface IncidentState {
  subject: string;
  /** Optimistic-locking counter; 0 when never stored. */
  version: number;
  open?: OpenIncident;
  /**
   * The last record folded, by (occurred instant, id): a re-read folds only records after it, so a crash
   * between the records' writes and the cursor's cannot open the same incident twice.
   */
  watermark?: { at: Instant; id: string };
}

export interface OpenIncident {
  /** The alert that opened it. */
  incident_id: string;
  opened_at: string;
  failures: number;
  /** When its last failure happened: a cluster's quiet period counts from it. */
  last_failure_at: string;
  /** When Lookout saw its last failure: the quiet period at a poll counts from it (on Lookout's clock). */
  last_failure_seen_at?: string;
  /** Status and error of the last failure: the next one with the same is a repeat. */
  last_signature: string;
  /** The opening alert's project, environment and service: the closing alert is routed as it was. */
  refs?: Pick<LookoutEventDetail, "project" | "environment" | "service">;
  /** Every alert of it so far stayed quiet (older than the backfill window): it closes without an alert. */
  history?: boolean;
}

/** A subject never stored: nothing open, version 0. */
export const emptyIncidentState = (subject: string): IncidentState => ({ subject, version: 0 });
