/**
 * The canonical event model: what the poller raises, the store keeps in its outbox, the publisher puts on
 * the bus, routes match on and notifiers render. One shape from end to end (docs/events.md).
 */

export const EVENT_SOURCE = "lookout";
export const EVENT_VERSION = 1;

export type EventKind = "deployment" | "webhook_delivery" | "cluster_log" | "health";
/** Every kind, in the order lists show them (the configuration's `kind` values, audit filters). */
export const KINDS = ["deployment", "webhook_delivery", "cluster_log", "health"] as const satisfies readonly EventKind[];

export type DeploymentTransition = "failed" | "still_failing" | "recovered" | "cancelled";
export type Transition =
  | DeploymentTransition
  | "changes_listed"
  | "delivery_failed"
  | "target_recovered"
  | "cluster_error"
  | "cluster_recovered"
  | HealthCheck;

/**
 * Transitions that close an incident: the incident's first message turns green (docs/events.md, "Incidents").
 * Every kind has one; `recovered` closes a service's deployments.
 */
export const CLOSING_TRANSITIONS = ["recovered", "target_recovered", "cluster_recovered"] as const satisfies readonly Transition[];
export const isClosing = (t: Transition): boolean => (CLOSING_TRANSITIONS as readonly string[]).includes(t);

export type HealthCheck = "token_rejected" | "source_failing" | "polling_stalled" | "receiver_failing" | "quarantined" | "dead_letters" | "queue_backlog";

export type Severity = "critical" | "error" | "warning" | "info";
export const SEVERITIES = ["critical", "error", "warning", "info"] as const satisfies readonly Severity[];

export const DETAIL_TYPES = {
  failed: "Deployment Failed",
  still_failing: "Deployment Still Failing",
  recovered: "Deployment Recovered",
  cancelled: "Deployment Cancelled",
  changes_listed: "Deployment Changes Listed",
  delivery_failed: "Webhook Delivery Failed",
  target_recovered: "Webhook Target Recovered",
  cluster_error: "Cluster Error",
  cluster_recovered: "Cluster Recovered",
  health: "Lookout Health",
} as const;
export type DetailType = (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];

const HEALTH_CHECKS = new Set<string>(["token_rejected", "source_failing", "polling_stalled", "receiver_failing", "quarantined", "dead_letters", "queue_backlog"]);
const KIND_OF_TRANSITION: Record<string, EventKind> = {
  failed: "deployment", still_failing: "deployment", recovered: "deployment", cancelled: "deployment", changes_listed: "deployment",
  delivery_failed: "webhook_delivery", target_recovered: "webhook_delivery",
  cluster_error: "cluster_log", cluster_recovered: "cluster_log",
};

/** The detail-type of a kind and transition; throws for a pair that does not exist (a bug upstream). */
export function detailTypeOf(kind: EventKind, transition: Transition): DetailType {
  if (kind === "health" && HEALTH_CHECKS.has(transition)) return DETAIL_TYPES.health;
  if (kind !== "health" && KIND_OF_TRANSITION[transition] === kind) {
    return DETAIL_TYPES[transition as Exclude<keyof typeof DETAIL_TYPES, "health">];
  }
  throw new Error(`no detail-type for kind ${kind} with transition ${transition}`);
}

export interface NamedRef {
  id: string;
  name?: string;
}

export interface CommitFacts {
  id?: string;
  short_id?: string;
  message?: string;
  author?: string;
  link?: string;
  tag?: string;
}

export interface DeploymentFacts {
  execution_id: string;
  commit?: CommitFacts;
  /** Who triggered the deployment (the platform's `auditing_data.triggered_by`). */
  triggered_by?: string;
  /** The member's name when `triggered_by` is a member's id or e-mail (the platform's member list). */
  triggered_by_name?: string;
  /** From where: API, CLI, CONSOLE, GIT, or a newer value. */
  origin?: string;
  /** ISO 8601 duration as the platform gives it (PT8M42S). */
  duration?: string;
  duration_sec?: number;
  /** For still_failing: how many failures in a row, this one included. */
  failure_count?: number;
  /** The status the execution had before this transition, when we saw one. */
  previous_status?: string;
  /** `changes_listed`: the commits since the service's last successful deployment (listApplicationCommits). */
  changes?: ChangeFacts;
}

/** What changed between the service's last successful deployment and the failing one. */
export interface ChangeFacts {
  /** The commit the last successful deployment ran, when one is known. */
  since_commit?: string;
  /** The failing deployment's commit. */
  until_commit?: string;
  /** Newest first, at most five. */
  commits: CommitFacts[];
  /** How many commits lie between the two in all (`commits` shows the first few). */
  total: number;
  /** More commits than the platform lists (it returns the last 100): `total` is a lower bound. */
  more?: boolean;
  /** Why the list is empty or partial, for people: "request budget short", "no earlier successful deployment". */
  note?: string;
}

/**
 * Where an event stands in its incident (docs/events.md, "Incidents"). Every failure opens or joins one:
 * a service's deployments, a webhook target (webhook + target host), a cluster.
 */
export interface IncidentFacts {
  /** What the incident is about: `deployment:<service>`, `webhook:<webhook>:<host>`, `cluster:<cluster>`. */
  subject: string;
  /** When its first failure happened (the opening alert's `occurred_at`). */
  opened_at: string;
  /** Failures in the incident so far, this one included (on a close: all of them). */
  failures?: number;
  /** This failure repeats the one before it in the incident (same status and error): counted, not re-posted. */
  repeat?: boolean;
  /** On a close: how long the incident lasted, in seconds. */
  duration_sec?: number;
  /** On a close: what ended it, for people ("DEPLOYED by alice via GIT", "HTTP 200", "quiet for 30m"). */
  resolved_by?: string;
}

export interface ErrorFacts {
  tag?: string;
  message?: string;
  hint?: string;
  link?: string;
  step?: string;
}

export interface HttpFacts {
  /** The platform's id of the delivery (since 1.1): find it on the platform, or `lookout explain` it. */
  delivery_id?: string;
  status_code: number | null;
  target_host?: string;
  matched_event?: string;
  delivery_kind?: string;
  /** The first few hundred characters of the target's answer, redacted. */
  response_excerpt?: string;
}

/**
 * The platform record an event is about (since 1.1; on every event but health): a deployment execution,
 * a webhook delivery, a cluster log entry. Cluster log entries have no platform id (docs/platform.md):
 * theirs is Lookout's hash of the entry, and `timestamp` and `step` as the platform wrote them find it.
 */
export interface RecordRef {
  type: "deployment_execution" | "webhook_delivery" | "cluster_log_entry";
  id: string;
  timestamp?: string;
  step?: string;
}

export interface HealthFacts {
  check: HealthCheck;
  /** The source or receiver concerned, e.g. `deployment:<org>/<app>`. */
  subject?: string;
  detail?: string;
  consecutive_failures?: number;
}

export interface LookoutEventDetail {
  version: typeof EVENT_VERSION;
  /** Stable: the same transition always has the same id, however often it is read. */
  id: string;
  kind: EventKind;
  transition: Transition;
  severity: Severity;
  organization: NamedRef;
  project?: NamedRef;
  environment?: NamedRef & { type?: string };
  service?: NamedRef & { type?: string };
  cluster?: NamedRef;
  webhook?: NamedRef;
  /** The platform's status: a deployment state, a log type, an HTTP status. */
  status?: string;
  /** When it happened, by the platform's clock, as a UTC instant (when Lookout saw it, if the platform's time is unusable: lib/model/time.ts). */
  occurred_at: string;
  /** When Lookout saw it, by its own clock. */
  observed_at: string;
  /** One line for people: what, where, how. */
  summary: string;
  deployment?: DeploymentFacts;
  error?: ErrorFacts;
  http?: HttpFacts;
  health?: HealthFacts;
  record?: RecordRef;
  /** The alert that opened the incident this event belongs to (its own id on the opening alert), for threading. */
  incident_id?: string;
  /** Where the event stands in its incident (since 1.2). */
  incident?: IncidentFacts;
  /** An amendment (`changes_listed`) names the alert whose messages it updates. */
  amends?: string;
  /** A link to the thing on the platform, when one is known. */
  link?: string;
  /** Dotted paths of text fields shortened to fit a size limit (each ends in `…[clipped]`). */
  clipped?: string[];
}

/** The envelope EventBridge gives targets; the local bus writes the same. */
export interface LookoutEventEnvelope {
  version: "0";
  id: string;
  "detail-type": DetailType;
  source: typeof EVENT_SOURCE;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: LookoutEventDetail;
}

/**
 * A failure's severity follows the environment it hit: production is critical, preview a warning, the
 * rest an error (the platform's environment types; an unknown type counts as the rest). Routes may
 * override it for their receivers (`routes[].severity`).
 */
export function failureSeverity(environmentType: string | undefined): Severity {
  const t = environmentType?.toUpperCase();
  if (t === "PRODUCTION") return "critical";
  if (t === "PREVIEW") return "warning";
  return "error";
}

/** What each close closes: a close carries the severity of its incident's opening. */
const OPENING_OF: Partial<Record<Transition, Transition>> = {
  recovered: "failed",
  target_recovered: "delivery_failed",
  cluster_recovered: "cluster_error",
};

/**
 * The severity of an event. A close has its incident's severity (shown green all the same): routes and
 * subscribers that select by severity see the incidents they saw open also close.
 */
export const severityOf = (kind: EventKind, transition: Transition, environmentType?: string): Severity => {
  const opening = OPENING_OF[transition];
  if (opening) return severityOf(kind, opening, environmentType);
  switch (transition) {
    case "failed":
    case "still_failing":
    case "changes_listed":
      return failureSeverity(environmentType);
    case "cluster_error":
    case "quarantined":
    case "dead_letters":
      return "error";
    case "token_rejected":
    case "polling_stalled":
    case "queue_backlog":
      return "critical";
    case "delivery_failed":
    case "source_failing":
    case "receiver_failing":
      return "warning";
    default:
      return kind === "health" ? "warning" : "info";
  }
};
