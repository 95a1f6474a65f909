/**
 * The audit trail's model: what a query asks (filters, a time range, a page) and what it answers (rows,
 * one per stored execution, record or alert, with who was told). docs/audit.md describes it for people.
 */
import type { EventKind, Transition } from "../model/event.js";
import type { AuditRow } from "../model/audit-row.js";

/**
 * Every transition Lookout raises and the kind it belongs to (lib/model/event.ts; a unit test checks
 * the two agree). Severity-only and kind-only queries are the union of these transitions' partitions.
 */
export const TRANSITIONS: ReadonlyArray<{ transition: Transition; kind: EventKind }> = [
  { transition: "failed", kind: "deployment" },
  { transition: "still_failing", kind: "deployment" },
  { transition: "recovered", kind: "deployment" },
  { transition: "cancelled", kind: "deployment" },
  { transition: "changes_listed", kind: "deployment" },
  { transition: "delivery_failed", kind: "webhook_delivery" },
  { transition: "target_recovered", kind: "webhook_delivery" },
  { transition: "cluster_error", kind: "cluster_log" },
  { transition: "cluster_recovered", kind: "cluster_log" },
  { transition: "token_rejected", kind: "health" },
  { transition: "source_failing", kind: "health" },
  { transition: "polling_stalled", kind: "health" },
  { transition: "receiver_failing", kind: "health" },
  { transition: "quarantined", kind: "health" },
  { transition: "dead_letters", kind: "health" },
  { transition: "queue_backlog", kind: "health" },
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

export interface AuditPage {
  rows: AuditRow[];
  /** Present when there may be more: pass it back for the next page of the same query. */
  cursor?: string;
  /** Which index answered and how (for people and tests). */
  plan: { index: string; partitions: string[]; filter?: string; batches?: { index: string; partitions: string[]; filter: string } };
}
