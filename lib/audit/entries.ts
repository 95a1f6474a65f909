/**
 * Stored items → audit rows and their index attributes. Pure. The store adds these attributes to what
 * it writes (records, executions, alerts), so the audit indexes are kept by DynamoDB in the same write.
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { ServiceContext } from "../alerts/build.js";
import type { ClusterLogRecord, DeploymentObservation, WebhookDeliveryRecord } from "../ingest/normalize.js";
import { AUDIT_ROW } from "../store/table.js";
import { instantOr } from "../model/time.js";
import type { AuditRow, Ref } from "./model.js";
import { type Dimension, AUDIT_SORT, dimensionKey, QUARANTINE_WHAT, sortKey } from "./keys.js";
import { MAX_SHORT_FIELD_BYTES, clipStrings } from "../store/bounds.js";

/** Rows stay small: they are copied into every index the item is in. */
const MAX_SUMMARY = 240;
const MAX_ROW_BYTES = 16 * 1024;

const clip = (s: string, max = MAX_SUMMARY) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);
const firstLine = (s: string | undefined, max = 80) => clip((s ?? "").split("\n")[0]!.trim(), max);
const shortSha = (id: string | undefined) => (id && /^[0-9a-f]{8,}$/i.test(id) ? id.slice(0, 7) : id);

/**
 * A platform time as a sortable ISO instant (milliseconds, UTC); the fallback when it is missing,
 * unreadable or implausible (lib/model/time.ts).
 */
export const isoInstant = instantOr;

function ref(r: { id?: string; name?: string } | undefined): Ref | undefined {
  if (!r?.id) return undefined;
  return r.name ? { id: r.id, name: r.name } : { id: r.id };
}

/** Drops undefined fields: DynamoDB maps stay small and equal rows compare equal. */
function compactRow(row: AuditRow): AuditRow {
  return Object.fromEntries(Object.entries(row).filter(([, v]) => v !== undefined)) as AuditRow;
}

/** The explain id of an execution: `<service id>:<execution id>` (no slash, so it fits in a URL path segment). */
export const executionEntryId = (serviceId: string, executionId: string) => `${serviceId}:${executionId}`;

export function parseExecutionEntryId(id: string): { serviceId: string; executionId: string } | undefined {
  const i = id.indexOf(":");
  return i > 0 && i < id.length - 1 ? { serviceId: id.slice(0, i), executionId: id.slice(i + 1) } : undefined;
}

type StoredRecord = { record_kind: string; id: string; organization_id: string };

/** A webhook delivery or cluster log entry as read. */
export function recordRow(record: StoredRecord, occurredAt: string, observedAt: string): AuditRow {
  const at = isoInstant(occurredAt, observedAt);
  if (record.record_kind === "cluster_log") {
    const r = record as ClusterLogRecord;
    const message = r.error?.message ?? r.message;
    return compactRow({
      type: "record", id: r.id, kind: "cluster_log", at, observed_at: observedAt,
      status: r.type,
      organization: r.organization_id,
      cluster: r.cluster_id ? { id: r.cluster_id } : undefined,
      summary: clip(`Cluster log ${r.type ?? "entry"}${r.error?.tag ? ` ${r.error.tag}` : ""}${r.step ? ` at ${r.step}` : ""}${message ? `: ${firstLine(message, 160)}` : ""}`),
    });
  }
  const r = record as Partial<WebhookDeliveryRecord> & StoredRecord;
  const svc = (r.services ?? [])[0];
  const code = r.status_code;
  const answered = code === null || code === undefined || code === 0 ? "got no answer" : `answered HTTP ${code}`;
  return compactRow({
    type: "record", id: r.id, kind: "webhook_delivery", at, observed_at: observedAt,
    status: code === null || code === undefined ? "NO_RESPONSE" : String(code),
    organization: r.organization_id,
    project: ref(svc?.project),
    environment: ref(svc?.environment),
    service: ref(svc),
    webhook: r.webhook_id ? { id: r.webhook_id } : undefined,
    summary: clip(`Webhook delivery${r.matched_event ? ` of ${r.matched_event}` : ""} to ${r.target_host ?? "its target"} ${answered}`),
  });
}

/** A deployment execution with its latest status. `ctx` names the service, its project and environment. */
export function executionRow(obs: DeploymentObservation, ctx: ServiceContext | undefined, firstSeenAt: string): AuditRow {
  const name = ctx?.name ?? obs.service_name;
  const commit = obs.commit;
  const parts = [
    `${name ?? obs.service_id} ${obs.status}`,
    commit?.id ? `commit ${shortSha(commit.id)}${commit.author ? ` by ${commit.author}` : ""}${commit.message ? `: ${firstLine(commit.message, 60)}` : ""}` : undefined,
    obs.triggered_by ? `triggered by ${obs.triggered_by}${obs.origin ? ` via ${obs.origin}` : ""}` : undefined,
  ].filter(Boolean);
  return compactRow({
    type: "execution", id: executionEntryId(obs.service_id, obs.execution_id), kind: "deployment",
    // The execution's start: it does not move as the status does, so its place in the index is stable.
    at: isoInstant(obs.created_at, firstSeenAt),
    observed_at: firstSeenAt,
    status: obs.status,
    organization: obs.organization_id,
    project: ref(ctx?.project),
    environment: ref(ctx?.environment),
    service: { id: obs.service_id, ...(name ? { name } : {}) },
    actor: obs.triggered_by,
    commit: commit?.id?.toLowerCase(),
    summary: clip(parts.join(" — ")),
  });
}

/** An alert as raised, with its suppression when it was kept quiet. */
export function alertRow(detail: LookoutEventDetail, suppression?: { reason: string; detail: string }): AuditRow {
  return compactRow({
    type: "alert", id: detail.id, kind: detail.kind,
    at: isoInstant(detail.occurred_at, detail.observed_at),
    observed_at: detail.observed_at,
    status: detail.status,
    transition: detail.transition,
    severity: detail.severity,
    organization: detail.organization.id,
    project: ref(detail.project),
    environment: ref(detail.environment),
    service: ref(detail.service),
    cluster: ref(detail.cluster),
    webhook: ref(detail.webhook),
    actor: detail.deployment?.triggered_by,
    commit: detail.deployment?.commit?.id?.toLowerCase(),
    summary: clip(detail.summary),
    state: suppression ? "suppressed" : "pending",
    suppression: suppression ? { reason: suppression.reason, detail: suppression.detail } : undefined,
  });
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
  else out.push(row.type === "alert" && row.transition ? ["transition", row.transition] : ["kind", row.kind]);
  return out;
}

/**
 * What an item carries for the audit indexes: the row, the shared sort key and one key per slot it has.
 * Keys come from the full values (hashed when long); the stored row has long names shortened.
 */
export function auditAttributes(row: AuditRow, pk: string): Record<string, unknown> {
  const stored = clipStrings(row, { maxBytes: MAX_ROW_BYTES, maxFieldBytes: MAX_SHORT_FIELD_BYTES }).value;
  const attrs: Record<string, unknown> = { [AUDIT_ROW]: stored, [AUDIT_SORT]: sortKey(row.at, pk) };
  for (const [dim, value] of rowDimensions(row)) {
    if (!value) continue;
    const { attr, key } = dimensionKey(dim, value);
    attrs[attr] = key;
  }
  return attrs;
}
