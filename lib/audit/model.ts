/**
 * The audit trail's model: what a query asks (filters, a time range, a page) and what it answers (rows,
 * one per stored execution, record or alert, with who was told). docs/audit.md describes it for people.
 */
import type { EventKind, Severity, Transition } from "../model/event.js";

/**
 * What a row stands for: a deployment execution (latest status), a record read, an alert raised, or a
 * record or alert quarantined (it could not be stored or published; docs/audit.md).
 */
export const ENTRY_TYPES = ["execution", "record", "alert", "quarantine"] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const KINDS: readonly EventKind[] = ["deployment", "webhook_delivery", "cluster_log", "health"];
export const SEVERITIES: readonly Severity[] = ["critical", "error", "warning", "info"];

/**
 * Every transition Lookout raises and the kind it belongs to (lib/model/event.ts; a unit test checks
 * the two agree). Severity-only and kind-only queries are the union of these transitions' partitions.
 */
export const TRANSITIONS: ReadonlyArray<{ transition: Transition; kind: EventKind }> = [
  { transition: "failed", kind: "deployment" },
  { transition: "still_failing", kind: "deployment" },
  { transition: "recovered", kind: "deployment" },
  { transition: "cancelled", kind: "deployment" },
  { transition: "delivery_failed", kind: "webhook_delivery" },
  { transition: "cluster_error", kind: "cluster_log" },
  { transition: "token_rejected", kind: "health" },
  { transition: "source_failing", kind: "health" },
  { transition: "polling_stalled", kind: "health" },
  { transition: "receiver_failing", kind: "health" },
  { transition: "quarantined", kind: "health" },
];

/** Filters whose values are platform ids (uuids). */
export const ID_FILTERS = ["organization", "project", "environment", "service", "cluster", "webhook"] as const;
export const FILTERS = [...ID_FILTERS, "kind", "status", "transition", "severity", "actor", "commit", "type"] as const;
export type FilterName = (typeof FILTERS)[number];
/** Normalized filter values: ids and actors lower case, statuses upper case. */
export type Filters = Partial<Record<FilterName, string>>;

/** ISO instants: `from` inclusive, `to` exclusive. */
export interface TimeRange {
  from?: string;
  to?: string;
}

/** Where a page stopped: the index key of its last row (what DynamoDB calls LastEvaluatedKey). */
export interface IndexPosition {
  ix_at: string;
  pk: string;
  sk: string;
}

export interface AuditQuery {
  filters: Filters;
  range: TimeRange;
  /** Identifies the question for cursors: the filters and the time range as asked (`since=7d`, not its resolution). */
  identity: string;
  limit: number;
  /** The previous page's last row, from the cursor. */
  after?: IndexPosition;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 1000;

/** A bad query: the message names the filter and says what is wrong. Never a server error. */
export class AuditQueryError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(field ? `${field}: ${problem}` : problem);
    this.name = "AuditQueryError";
  }
}

export interface Ref {
  id: string;
  name?: string;
}

/** One delivery of an alert to one receiver (joined to alert rows when they are read). */
export interface DeliveryRow {
  route: string;
  receiver: string;
  /** sent, suppressed (muted), held (storm, awaiting its digest), failed, sending. */
  state: string;
  attempts: number;
  updated_at: string;
  reason?: string;
  detail?: string;
  digest_id?: string;
  error?: string;
}

/** What the audit indexes store and project for each execution, record and alert. */
export interface AuditRow {
  type: EntryType;
  /** What `lookout explain` takes: the alert id, the record id, `<service id>:<execution id>`. */
  id: string;
  kind: EventKind;
  /** When it happened, by the platform's clock (ISO, milliseconds, UTC). */
  at: string;
  /** When Lookout saw it (first saw it, for executions). */
  observed_at: string;
  status?: string;
  transition?: Transition;
  severity?: Severity;
  organization: string;
  project?: Ref;
  environment?: Ref;
  service?: Ref;
  cluster?: Ref;
  webhook?: Ref;
  /** Who triggered the deployment. */
  actor?: string;
  /** The full commit id, lower case. */
  commit?: string;
  summary: string;
  /** Alerts: published to the bus (pending) or kept quiet (suppressed, with the reason). */
  state?: "pending" | "suppressed";
  suppression?: { reason: string; detail: string };
  /** Quarantine: the stage that could not go on (store the record, publish the alert) and why. */
  stage?: "ingest" | "publish";
  reason?: string;
  /** Alerts: the explain id of the record or execution that raised it. */
  source?: string;
  /** Alerts: who was told (joined when read, never stored). */
  deliveries?: DeliveryRow[];
}

export interface AuditPage {
  rows: AuditRow[];
  /** Present when there may be more: pass it back for the next page of the same query. */
  cursor?: string;
  /** Which index answered and how (for people and tests). */
  plan: { index: string; partitions: string[]; filter?: string };
}
