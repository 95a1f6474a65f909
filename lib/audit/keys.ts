/**
 * The audit indexes' keys: which slot (GSI) a dimension lives in and how its value is written. Writers
 * (lib/audit/entries.ts) and the planner (lib/audit/plan.ts) both build keys here, so a query always
 * looks where the item was put.
 */
import { AUDIT_SLOTS, AUDIT_SORT, type AuditSlot } from "../store/table.js";
import { keyPart } from "../store/bounds.js";

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

export { AUDIT_SORT };

/** The "what" value of every quarantined record or alert (they are few: one partition). */
export const QUARANTINE_WHAT = "quarantine";
