/**
 * The query planner: which audit index answers a query, which partitions of it (several are merged
 * newest first), the sort-key range, and the filter for the other dimensions. Pure.
 *
 * The key is the most selective filter present: a commit, an actor, a service; then alerts only (a
 * transition, or a severity or type that selects only alert partitions: alerts are a small share of
 * what is stored); then a cluster, webhook, environment, project, status; then kind or type (unions of
 * "what" partitions); last, every "what" partition merged, filtered by the organization if one is given.
 */
import { type EventKind, KINDS, SEVERITIES, type Transition, severityOf } from "../model/event.js";
import { AUDIT_FILTERS, AUDIT_SLOTS, AUDIT_SORT, auditIndexName, BATCH_FILTERED_DIMENSIONS, batchFilters, COMMIT_KEY_LENGTH, DIMENSIONS, type Dimension, QUARANTINE_WHAT, actionWhat, dimensionKey, normalizeValue } from "../model/audit-index.js";
import { isDeliveryStatus } from "../model/audit-row.js";
import { BATCH_PREFIX } from "../model/items.js";
import type { AuditQuery, FilterName, Filters } from "./model.js";
import { TRANSITIONS } from "./model.js";

export interface Plan {
  index: string;
  /** The index's partition key attribute. */
  keyAttr: string;
  /** Partition key values; more than one are merged by sort key, newest first. Empty: nothing can match. */
  partitions: string[];
  /** Sort-key bounds: `lo` inclusive, `hi` exclusive. */
  lo?: string;
  hi?: string;
  filter?: Filter;
  /** What chose the key, for people: `service`, `kind`, `everything`. */
  by: string;
  /**
   * Batches of records that raised nothing are not in the key's index when the key is one of their
   * filtered dimensions (a project, a status): they are read from their kinds' "what" partitions, this
   * filter keeping the batches that match, merged with the key's partitions.
   */
  batches?: { index: string; keyAttr: string; partitions: string[]; filter: Filter };
}

export type Filter = { expression: string; names: Record<string, string>; values: Record<string, string> };

/** A partition of the "what" slot and what every item in it is. */
interface WhatPartition {
  key: string;
  type: string;
  kind: string;
  transition?: string;
  /** The severities its alerts can have: a deployment failure's follows its environment's type. */
  severities?: string[];
}

const severitiesOf = (kind: EventKind, transition: Transition) =>
  [...new Set([undefined, "PRODUCTION", "PREVIEW"].map((env) => severityOf(kind, transition, env)))];

const WHAT_PARTITIONS: WhatPartition[] = [
  { key: dimensionKey("kind", "deployment").key, type: "execution", kind: "deployment" },
  { key: dimensionKey("kind", "webhook_delivery").key, type: "record", kind: "webhook_delivery" },
  { key: dimensionKey("kind", "cluster_log").key, type: "record", kind: "cluster_log" },
  ...TRANSITIONS.map(({ transition, kind }) => ({
    key: dimensionKey("transition", transition).key, type: "alert", kind, transition, severities: severitiesOf(kind, transition),
  })),
  // Quarantined records and alerts, of any kind: one partition (a kind filter leaves them out).
  { key: dimensionKey("kind", QUARANTINE_WHAT).key, type: "quarantine", kind: "" },
  // Clicks on alerts' messages (acknowledge, mute): a partition per kind of alert, of any severity.
  ...KINDS.map((kind) => ({ key: dimensionKey("kind", actionWhat(kind)).key, type: "action", kind, severities: [...SEVERITIES] })),
];

/** The filters a "what" partition answers by itself: kind, transition, severity, entry type. */
const WHAT_FILTERS = ["kind", "transition", "severity", "type"] as const satisfies readonly FilterName[];

const answers = (p: WhatPartition, f: Filters, name: (typeof WHAT_FILTERS)[number]) =>
  f[name] === undefined || (name === "severity" ? !!p.severities?.includes(f.severity!) : p[name] === f[name]);

export const whatPartitions = (f: Filters): string[] =>
  WHAT_PARTITIONS.filter((p) => WHAT_FILTERS.every((name) => answers(p, f, name))).map((p) => p.key);

/** A severity the "what" partitions cannot answer alone: one of them holds alerts of several severities. */
const severityVaries = (partitions: string[]) =>
  WHAT_PARTITIONS.some((p) => partitions.includes(p.key) && (p.severities?.length ?? 0) > 1);

/** Single-dimension keys, most selective first (alert-only partitions go between the two groups). */
const KEY_FIRST: Dimension[] = ["commit", "actor", "service"];
const KEY_THEN: Dimension[] = ["cluster", "webhook", "environment", "project", "status"];

/** Alerts, quarantined things and clicks: small shares of what is stored, so their partitions make good keys. */
const isAlertPartition = (key: string) =>
  key.startsWith(`${DIMENSIONS.transition.prefix}#`) || key === dimensionKey("kind", QUARANTINE_WHAT).key || key.startsWith(dimensionKey("kind", actionWhat("")).key);

type Key = { dim: Dimension | "what"; attr: string; partitions: string[]; by: string };

function chooseKey(f: Filters): Key {
  const single = (dim: Dimension): Key => {
    const { attr, key } = dimensionKey(dim, f[dim as FilterName]!);
    return { dim, attr, partitions: [key], by: dim };
  };
  const what = (by: string): Key => ({ dim: "what", attr: AUDIT_SLOTS.what, partitions: whatPartitions(f), by });
  for (const dim of KEY_FIRST) if (f[dim as FilterName] !== undefined) return single(dim);
  const named = WHAT_FILTERS.filter((n) => f[n] !== undefined);
  const alertsOnly = named.length > 0 && whatPartitions(f).every(isAlertPartition);
  if (alertsOnly) return what(named.join("+"));
  for (const dim of KEY_THEN) if (f[dim as FilterName] !== undefined) return single(dim);
  if (named.length) return what(named.join("+"));
  // No index of its own (lib/model/audit-index.ts): every "what" partition, filtered by organization.
  if (f.organization !== undefined) return what("organization");
  return what("everything");
}

/** The kinds of records stored in batches, and where a batch of each is in the "what" index. */
const BATCHED_KINDS = Object.keys(BATCH_FILTERED_DIMENSIONS) as Array<keyof typeof BATCH_FILTERED_DIMENSIONS>;

/** The filter expression of the dimensions the key does not cover. */
function filterFor(f: Filters, key: Key, batches?: "also" | "only"): Plan["filter"] {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, string> = {};
  const value = (v: string) => {
    const name = `:f${Object.keys(values).length}`;
    values[name] = v;
    return name;
  };
  const rowField = (field: string) => {
    names["#row"] = AUDIT_FILTERS;
    names[`#${field}`] = field;
    return `#row.#${field}`;
  };
  // A batch holds the keys of the dimensions it is not found by among its filtered fields.
  const slotClause = (dim: Dimension, attr: string, k: string) => {
    names[`#${attr}`] = attr;
    const v = value(k);
    if (!batches || !batchFilters(dim)) return `#${attr} = ${v}`;
    const filtered = `${rowField(attr)} = ${v}`;
    return batches === "only" ? filtered : `(#${attr} = ${v} OR ${filtered})`;
  };
  if (batches === "only") {
    // Not `#pk`: the key condition names the index's key so.
    names["#item"] = "pk";
    clauses.push(`begins_with(#item, ${value(BATCH_PREFIX)})`);
    if (key.dim !== "what") {
      const { attr, key: k } = dimensionKey(key.dim, f[key.dim as FilterName]!);
      clauses.push(slotClause(key.dim, attr, k));
    }
  }
  for (const name of Object.keys(f) as FilterName[]) {
    const v = f[name]!;
    const partitionsSay = key.dim === "what" && (WHAT_FILTERS as readonly string[]).includes(name);
    if (partitionsSay && !(name === "severity" && severityVaries(key.partitions))) continue;
    if (name === "type" || name === "kind" || name === "severity") {
      clauses.push(`${rowField(name)} = ${value(v)}`);
      continue;
    }
    const dim = name as Dimension;
    // Same slot as the key (a cluster with a service, a webhook with an actor): decided in planQuery.
    if (dim !== key.dim && key.dim !== "what" && DIMENSIONS[dim].slot === DIMENSIONS[key.dim].slot) continue;
    if (dim !== key.dim) {
      const { attr, key: k } = dimensionKey(dim, v);
      clauses.push(slotClause(dim, attr, k));
    }
    // Commits are keyed by their short id: a longer one is checked against the full id.
    if (dim === "commit" && v.length > COMMIT_KEY_LENGTH) clauses.push(`begins_with(${rowField("commit")}, ${value(v)})`);
  }
  return clauses.length ? { expression: clauses.join(" AND "), names, values } : undefined;
}

export function planQuery(q: AuditQuery): Plan {
  const key = chooseKey(q.filters);
  const slot = key.dim === "what" ? "what" : DIMENSIONS[key.dim].slot;
  let hi = q.range.to;
  // The next page starts below the previous page's last row; its sort key is unique (it ends in the pk).
  if (q.after && (!hi || q.after.ix_at < hi)) hi = q.after.ix_at;
  const lo = q.range.from;
  // An item has one value per slot: two filters in the key's slot (a service and a cluster) match nothing.
  const clash = key.dim !== "what" && (Object.keys(q.filters) as FilterName[]).some((name) => {
    const dim = name as Dimension;
    return dim !== key.dim && dim in DIMENSIONS && DIMENSIONS[dim].slot === DIMENSIONS[key.dim as Dimension].slot;
  });
  const empty = clash || (lo !== undefined && hi !== undefined && lo >= hi);
  // The key's partitions hold batches when it is a dimension batches are keyed by (a source, a service) or a kind of record.
  const keyHoldsBatches = (key.dim !== "what" && !batchFilters(key.dim)) ||
    (key.dim === "what" && key.partitions.some((p) => BATCHED_KINDS.some((k) => p === dimensionKey("kind", k).key)));
  const filter = filterFor(q.filters, key, keyHoldsBatches ? "also" : undefined);
  const batchKinds = key.dim === "what" ? [] : BATCHED_KINDS.filter((k) => BATCH_FILTERED_DIMENSIONS[k].includes(key.dim as Dimension) &&
    // A delivery's status is an HTTP status code: a deployment's status reads no delivery batch.
    !(k === "webhook_delivery" && key.dim === "status" && !isDeliveryStatus(normalizeValue("status", q.filters.status!))));
  const batchPartitions = whatPartitions(q.filters).filter((p) => batchKinds.some((k) => p === dimensionKey("kind", k).key));
  return {
    index: auditIndexName(slot),
    keyAttr: key.attr,
    partitions: empty ? [] : key.partitions,
    ...(lo !== undefined ? { lo } : {}),
    ...(hi !== undefined ? { hi } : {}),
    ...(filter ? { filter } : {}),
    by: key.by,
    ...(batchPartitions.length && !empty
      ? { batches: { index: auditIndexName("what"), keyAttr: AUDIT_SLOTS.what, partitions: batchPartitions, filter: filterFor(q.filters, key, "only")! } }
      : {}),
  };
}

/** The key condition of one partition's Query (BETWEEN is inclusive: the reader drops a row at `hi`). */
export function keyCondition(plan: Pick<Plan, "keyAttr" | "lo" | "hi">, partition: string): { expression: string; names: Record<string, string>; values: Record<string, string> } {
  const names: Record<string, string> = { "#pk": plan.keyAttr };
  const values: Record<string, string> = { ":pk": partition };
  let range = "";
  if (plan.lo !== undefined && plan.hi !== undefined) {
    range = " AND #sk BETWEEN :lo AND :hi";
    values[":lo"] = plan.lo;
    values[":hi"] = plan.hi;
  } else if (plan.hi !== undefined) {
    range = " AND #sk < :hi";
    values[":hi"] = plan.hi;
  } else if (plan.lo !== undefined) {
    range = " AND #sk >= :lo";
    values[":lo"] = plan.lo;
  }
  // DynamoDB refuses a name the expression does not use.
  if (range) names["#sk"] = AUDIT_SORT;
  return { expression: `#pk = :pk${range}`, names, values };
}
