/**
 * Platform records → Lookout's records. Pure, lenient (fields may be missing or null; enum values may
 * be new) and safe: payloads are redacted here, before anything is stored or forwarded.
 */
import type { ClusterLogEntry, Commit, DeploymentHistoryItem, WebhookEvent } from "../platform/schemas.js";
import { contentHash } from "../model/hash.js";
import { knownSecretsOf, redact, redactText, type RedactOptions } from "../platform/redact.js";
import { clusterLogFailed, deliveryFailed } from "./deployment-status.js";
import { readPlatformTime } from "../model/time.js";
import type { ClusterLogRecord, CommitRecord, DeploymentObservation, NamedService, WebhookDeliveryRecord } from "../model/observations.js";
import type { SourceRef } from "../model/source.js";
import { compact } from "../model/compact.js";

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const clip = (s: string | undefined, max: number) => (s && s.length > max ? `${s.slice(0, max)}…` : s);
/** A text field, redacted (docs/security.md): every free-text field of every source goes through here. */
const text = (v: unknown, opts?: RedactOptions): string | undefined => {
  const s = str(v);
  return s ? redactText(s, opts) : undefined;
};

export function normalizeWebhookDelivery(e: WebhookEvent, src: SourceRef): WebhookDeliveryRecord {
  const url = str(e.target_url_used);
  // A SLACK-kind target's path is the secret: it keeps its host and a fingerprint, wherever it appears.
  const opts = knownSecretsOf(e);
  const payload = e.request ? redact(e.request, opts) : undefined;
  return compact({
    record_kind: "webhook_delivery" as const,
    id: e.id,
    organization_id: src.organizationId,
    webhook_id: src.id,
    created_at: str(e.created_at),
    delivery_kind: text(e.kind),
    matched_event: text(e.matched_event),
    target_host: url ? text(hostOf(url)) : undefined,
    target_url: text(url, opts),
    status_code: typeof e.target_response_status_code === "number" ? e.target_response_status_code : null,
    failed: deliveryFailed(e.target_response_status_code),
    response_excerpt: clip(text(e.target_response_body, opts), 500),
    request: payload ? boundedPayload(payload) : undefined,
    services: servicesNamedIn(payload),
  });
}

/** Payloads are stored whole up to this size; DynamoDB items stop at 400 KB, and no alert needs more. */
export const MAX_STORED_PAYLOAD_BYTES = 64 * 1024;

function boundedPayload(payload: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(payload);
  if (Buffer.byteLength(json) <= MAX_STORED_PAYLOAD_BYTES) return payload;
  return { _clipped: true, _bytes: Buffer.byteLength(json), excerpt: json.slice(0, 4096) };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** The services a STANDARD webhook payload names, with their project and environment. */
export function servicesNamedIn(request: Record<string, unknown> | null | undefined): NamedService[] {
  const payload = request?.payload;
  if (!payload || typeof payload !== "object") return [];
  const p = payload as Record<string, unknown>;
  const ref = (v: unknown) => {
    if (!v || typeof v !== "object") return undefined;
    const o = v as Record<string, unknown>;
    return compact({ id: str(o.id), name: str(o.name), type: str(o.type) });
  };
  const project = ref(p.project);
  const environment = ref(p.environment);
  const out: NamedService[] = [];
  for (const [field, type] of [
    ["applications", "APPLICATION"], ["containers", "CONTAINER"], ["databases", "DATABASE"], ["jobs", "JOB"],
  ] as const) {
    const list = p[field];
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      const s = ref(item);
      if (s?.id) out.push(compact({ id: s.id, name: s.name, type, project, environment }));
    }
  }
  return out;
}

export function normalizeClusterLog(e: ClusterLogEntry, src: SourceRef): ClusterLogRecord {
  const err = e.error ?? undefined;
  const details = e.details ?? err?.event_details ?? undefined;
  const underlying = err?.underlying_error?.message ?? err?.event_details?.underlying_error?.message ?? undefined;
  const message = str(e.message?.safe_message);
  const transmitter = details?.transmitter ?? undefined;
  return compact({
    record_kind: "cluster_log" as const,
    id: contentHash(src.id, e.timestamp, e.step, e.type, err?.tag, message ?? err?.user_log_message),
    organization_id: src.organizationId,
    cluster_id: src.id,
    timestamp: str(e.timestamp),
    type: text(e.type),
    step: text(e.step),
    failed: clusterLogFailed(e.type, e.step),
    message: text(message),
    error: err
      ? compact({
          tag: text(err.tag),
          message: text(err.user_log_message),
          hint: text(err.hint_message),
          link: text(err.link),
          underlying: clip(text(underlying), 1000),
        })
      : undefined,
    provider_kind: text(details?.provider_kind),
    region: text(details?.region),
    transmitter: transmitter
      ? compact({ type: text(transmitter.type), id: text(transmitter.id), name: text(transmitter.name) })
      : undefined,
  });
}

/** A commit (a deployment's, or one of endpoint 16's list): text redacted, the message bounded. */
export function normalizeCommit(commit: Commit): CommitRecord {
  return compact({
    id: str(commit.git_commit_id),
    message: clip(text(commit.message), 1000),
    author: text(commit.author_name),
    link: text(commit.commit_page_url),
    tag: text(commit.tag),
    created_at: str(commit.created_at),
  });
}

/** `seenAt`: when Lookout read the entry, to tell an implausible (far future) time from a real one. */
export function normalizeDeployment(item: DeploymentHistoryItem, src: SourceRef, seenAt?: string): DeploymentObservation {
  const ident = item.identifier;
  const audit = item.auditing_data ?? undefined;
  const created = readPlatformTime(str(audit?.created_at), seenAt);
  const updated = readPlatformTime(str(audit?.updated_at), seenAt);
  const commit = item.details?.commit ?? undefined;
  const serviceId = str(ident.service_id) ?? src.id;
  const givenExec = str(ident.execution_id);
  return compact({
    record_kind: "deployment" as const,
    organization_id: src.organizationId,
    application_id: src.id,
    service_id: serviceId,
    service_name: text(ident.name),
    service_type: text(ident.service_type),
    // Old entries have no execution_id: derive a stable one from what does not change.
    execution_id: givenExec ?? `derived-${contentHash(serviceId, audit?.created_at, commit?.git_commit_id)}`,
    execution_id_derived: !givenExec,
    status: text(item.status) ?? "UNKNOWN",
    created_at: created.iso,
    updated_at: updated.iso,
    // A time is short: what is longer is not one, and a bounded excerpt of it is enough for the audit trail.
    created_at_raw: clip(text(created.raw), 100),
    updated_at_raw: clip(text(updated.raw), 100),
    triggered_by: text(audit?.triggered_by),
    origin: text(audit?.origin),
    commit: commit ? normalizeCommit(commit) : undefined,
    total_duration: text(item.total_duration),
    status_details: item.status_details
      ? compact({
          action: text(item.status_details.action),
          status: text(item.status_details.status),
          sub_action: text(item.status_details.sub_action),
        })
      : undefined,
  });
}
