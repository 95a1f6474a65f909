/**
 * Quarantine (docs/audit.md, "Quarantine"): a record that cannot be stored, or an alert that cannot be
 * published, for a reason no retry fixes, is set aside instead of blocking what comes after it.
 */
import type { AlertItem } from "./alert-item.js";
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

/** What quarantining writes (lib/alerts/quarantine.ts builds it): the quarantine item and its health alert. */
export interface QuarantineWrite {
  item: Record<string, unknown> & { pk: string; sk: string };
  health: AlertItem;
}

/**
 * The quarantine port: writes the item and its health alert together, so the health event is raised
 * exactly when the thing is first set aside. True when it was set aside now, false when it already was.
 */
export interface QuarantinePort {
  quarantine(write: QuarantineWrite): Promise<boolean>;
  /**
   * Epoch seconds at which an item written now expires (the configured retention); a promise from a
   * port that reads its settings when first used (the publish function's: lib/app/cloud/publish.ts).
   */
  expiresAt(): number | Promise<number>;
}
