/**
 * The audit indexes' layout and keys: which slot (GSI) a dimension lives in, how its value is written,
 * and the attributes an audited item carries. Pure. Writers (whoever builds a record, execution or alert
 * item), the table (lib/store/table.ts) and the planner (lib/audit/query-plan.ts) all build keys here, so a
 * query always looks where the item was put.
 */
import type { AuditRow } from "./audit-row.js";
import { MAX_SHORT_FIELD_BYTES, clipStrings, keyPart } from "./bounds.js";

/**
 * The audit slots (docs/audit.md). Each slot but the organization's is an index that partitions by one
 * dimension, `<DIM>#<value>`, and sorts by `<occurred_at>#<pk>` (the attribute they share), so a filter
 * is a key condition read newest first. A slot holds dimensions that never meet on one item (a service
 * or a cluster; an actor or a webhook; a kind or a transition), which keeps them to eight. Items write
 * only the slots they have.
 */
export const AUDIT_SLOTS = {
  org: "ix_org",
  project: "ix_project",
  env: "ix_env",
  subject: "ix_subject",
  who: "ix_who",
  commit: "ix_commit",
  status: "ix_status",
  what: "ix_what",
} as const;

export type AuditSlot = keyof typeof AUDIT_SLOTS;

/**
 * The slots with an index of their own. Every audited item is in exactly one "what" partition, so the
 * union of those is everything: the organization (on every item; one in most installations) is read
 * there with a filter on `ix_org`, which every index projects, instead of an index that would repeat
 * the whole audit trail and bill a write unit more for every item stored (BENCHMARKS.md, cost).
 */
export const INDEXED_SLOTS: readonly AuditSlot[] = (Object.keys(AUDIT_SLOTS) as AuditSlot[]).filter((slot) => slot !== "org");

/** The shared sort key of the audit indexes. */
export const AUDIT_SORT = "ix_at";

/**
 * The audit row: what a query shows (lib/model/audit-row.ts). Kept on the item only: an index entry
 * names its item, and the reader fetches the rows of a page together (docs/audit.md, "Lean index entries").
 */
export const AUDIT_ROW = "row";

/**
 * The row's fields a query filters on, under the name every index projects (infra/table.yml). Items
 * written before the lean entries hold their whole row here; `auditRowOf` reads either.
 */
export const AUDIT_FILTERS = "audit";

/** The row fields a filter reads (lib/audit/query-plan.ts). */
export const ROW_FILTER_FIELDS = ["type", "kind", "severity", "commit", "status"] as const;

export type AuditFilterRow = Partial<Pick<AuditRow, (typeof ROW_FILTER_FIELDS)[number]>>;

/** The filtered fields of a row: what an index entry carries besides its keys. */
export const filterRow = (row: Partial<AuditRow> | undefined): AuditFilterRow =>
  Object.fromEntries(ROW_FILTER_FIELDS.filter((f) => row?.[f] !== undefined).map((f) => [f, row![f]]));

/** The audit row of an item or index entry: on the item, or whole under the projected name (an older item's). */
export function auditRowOf(item: Record<string, unknown>): AuditRow | undefined {
  const row = item[AUDIT_ROW] ?? item[AUDIT_FILTERS];
  return row && typeof row === "object" && "id" in row ? (row as AuditRow) : undefined;
}

/** The index of a slot. */
export const auditIndexName = (slot: AuditSlot) => `audit-${slot}`;

/** Rows stay small: a page of them is read with its index entries. */
const MAX_ROW_BYTES = 16 * 1024;

export type Dimension =
  | "organization" | "project" | "environment" | "service" | "cluster" | "webhook"
  | "actor" | "commit" | "status" | "transition" | "kind";

/** Slot and key prefix of each dimension. Dimensions that share a slot never meet on one item. */
export const DIMENSIONS: Record<Dimension, { slot: AuditSlot; prefix: string }> = {
  organization: { slot: "org", prefix: "ORG" },
  project: { slot: "project", prefix: "PRJ" },
  environment: { slot: "env", prefix: "ENV" },
  service: { slot: "subject", prefix: "SVC" },
  cluster: { slot: "subject", prefix: "CLU" },
  webhook: { slot: "who", prefix: "WH" },
  actor: { slot: "who", prefix: "ACT" },
  commit: { slot: "commit", prefix: "CMT" },
  status: { slot: "status", prefix: "ST" },
  transition: { slot: "what", prefix: "TR" },
  kind: { slot: "what", prefix: "KIND" },
};

/**
 * Records that raised nothing are stored in batches (lib/store/routine-batches.ts) found by their source,
 * service and kind (docs/audit.md, "Records that raised nothing"). A batch of each kind carries these
 * dimensions' keys among its filtered fields (`audit`) rather than as keys — those with few values (a
 * project, an environment, a status), so a query of one, which reads the kind's batches, finds a fair
 * share of what it reads — and every other dimension as a key, in its index (a service: there are many,
 * and a quiet one would read every batch of the period).
 */
export const BATCH_FILTERED_DIMENSIONS: Readonly<Record<"webhook_delivery" | "cluster_log", readonly Dimension[]>> = {
  webhook_delivery: ["project", "environment", "status"],
  cluster_log: ["status"],
};

/** Whether a batch can carry this dimension as a filtered field rather than a key. */
export const batchFilters = (dim: Dimension): boolean => Object.values(BATCH_FILTERED_DIMENSIONS).some((dims) => dims.includes(dim));

/** The dimension of an index key value (`PRJ#…` is a project's). */
export function dimensionOfKey(key: unknown): Dimension | undefined {
  if (typeof key !== "string") return undefined;
  const prefix = key.slice(0, key.indexOf("#"));
  return (Object.keys(DIMENSIONS) as Dimension[]).find((d) => DIMENSIONS[d].prefix === prefix);
}

/** Commits are keyed by their first 7 characters, so a short id finds them; longer ids are filtered. */
export const COMMIT_KEY_LENGTH = 7;

/** The normal form of a value: ids, actors and commits compare case-insensitively, statuses upper case. */
export function normalizeValue(dim: Dimension, value: string): string {
  const v = value.trim();
  if (dim === "status") return v.toUpperCase();
  if (dim === "transition" || dim === "kind") return v;
  return v.toLowerCase();
}

/** The attribute and key value under which an item with this value is found (a long value is hashed: index keys have size limits). */
export function dimensionKey(dim: Dimension, value: string): { attr: string; key: string } {
  const { slot, prefix } = DIMENSIONS[dim];
  let v = normalizeValue(dim, value);
  if (dim === "commit") v = v.slice(0, COMMIT_KEY_LENGTH);
  return { attr: AUDIT_SLOTS[slot], key: `${prefix}#${keyPart(v)}` };
}

/** The shared sort key: newest first by occurrence; the item's pk makes it unique. */
export const sortKey = (at: string, pk: string) => `${at}#${pk}`;
/** The instant of a sort key (or of a bound that is only an instant). */
export const instantOf = (key: string) => {
  const cut = key.indexOf("#");
  return cut < 0 ? key : key.slice(0, cut);
};

/** The "what" value of every quarantined record or alert (they are few: one partition). */
export const QUARANTINE_WHAT = "quarantine";

/** The "what" value of the clicks on alerts of a kind (docs/actions.md): a partition per kind, so a kind filter finds them. */
export const actionWhat = (kind: string) => `action:${kind}`;

/**
 * What an audited item (record, execution, alert) carries for the audit indexes: the row, its filtered
 * fields and one key per index it is in (docs/audit.md).
 */
export interface AuditAttributes {
  row?: AuditRow;
  audit?: AuditFilterRow;
  ix_at?: string;
  [indexKey: `ix_${string}`]: string | undefined;
}

/** The row's value in each dimension it has (at most one per slot). */
export function rowDimensions(row: AuditRow): Array<[Dimension, string]> {
  const out: Array<[Dimension, string]> = [["organization", row.organization]];
  if (row.project) out.push(["project", row.project.id]);
  if (row.environment) out.push(["environment", row.environment.id]);
  if (row.service) out.push(["service", row.service.id]);
  else if (row.cluster) out.push(["cluster", row.cluster.id]);
  if (row.actor) out.push(["actor", row.actor]);
  else if (row.webhook) out.push(["webhook", row.webhook.id]);
  if (row.commit) out.push(["commit", row.commit]);
  if (row.status) out.push(["status", row.status]);
  if (row.type === "quarantine") out.push(["kind", QUARANTINE_WHAT]);
  else if (row.type === "action") out.push(["kind", actionWhat(row.kind)]);
  else out.push(row.type === "alert" && row.transition ? ["transition", row.transition] : ["kind", row.kind]);
  return out;
}

/**
 * What an item carries for the audit indexes: the row, its filtered fields (all an index entry repeats
 * of it), the shared sort key and one key per slot it has. Keys come from the full values (hashed when
 * long); the stored row has long names shortened.
 */
export function auditAttributes(row: AuditRow, pk: string): Record<string, unknown> {
  const stored = clipStrings(row, { maxBytes: MAX_ROW_BYTES, maxFieldBytes: MAX_SHORT_FIELD_BYTES }).value;
  const attrs: Record<string, unknown> = { [AUDIT_ROW]: stored, [AUDIT_FILTERS]: filterRow(stored), [AUDIT_SORT]: sortKey(row.at, pk) };
  for (const [dim, value] of rowDimensions(row)) {
    if (!value) continue;
    const { attr, key } = dimensionKey(dim, value);
    attrs[attr] = key;
  }
  return attrs;
}
