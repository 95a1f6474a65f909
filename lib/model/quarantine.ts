/**
 * Quarantine (docs/audit.md, "Quarantine"): a record that cannot be stored, or an alert that cannot be
 * published, for a reason no retry fixes, is set aside instead of blocking what comes after it.
 */
import type { Ref } from "./audit-row.js";

/** What was quarantined: a record Lookout could not store, or an alert it could not publish. */
export interface QuarantinedThing {
  stage: "ingest" | "publish";
  /** What it is: deployment, webhook_delivery, cluster_log, or the alert's kind. */
  kind: string;
  /** The record's id, `<service id>:<execution id>`, or the alert's id. */
  id: string;
  /** The source key it was read from, or `outbox`. */
  source: string;
  organization: string;
  reason: string;
}

export interface QuarantineEntry extends QuarantinedThing {
  /** The record or alert detail as it was: redacted and clipped before it is kept. */
  content: unknown;
  /** Names it carries, for the audit filters (a service, cluster or webhook). */
  refs?: { service?: Ref; cluster?: Ref; webhook?: Ref; project?: Ref; environment?: Ref };
}

/** The quarantine port: true when the thing was set aside now, false when it already was. */
export interface QuarantinePort {
  quarantine(entry: QuarantineEntry): Promise<boolean>;
}
