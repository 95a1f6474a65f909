/**
 * Records and transitions → event details (lib/model/event.ts). Pure. Each detail carries what a
 * responder needs to act without opening the platform: what, where, which commit, who, the error.
 */
import type { DeploymentTransition, IncidentFacts, LookoutEventDetail, NamedRef } from "../model/event.js";
import { EVENT_VERSION, severityOf } from "../model/event.js";
import { contentHash } from "../model/hash.js";
import type { ClusterLogRecord, DeploymentObservation, WebhookDeliveryRecord, ServiceContext } from "../model/observations.js";
import { compact } from "../model/compact.js";
import { durationSeconds, formatLasted, instantOr, parseTimestamp } from "../model/time.js";
import { commitFacts, shortSha } from "./changes-listed.js";

/**
 * The stable id of the alert a transition raises: the execution, its status and the occurrence (the
 * nth time it entered that status), so the same transition always gets the same id and a re-run that
 * fails again gets another. The first occurrence keeps the id it had before occurrences were counted.
 */
export const deploymentAlertKey = (obs: DeploymentObservation, occurrence = 1) =>
  occurrence > 1
    ? (["deployment", obs.service_id, obs.execution_id, obs.status, String(occurrence)] as const)
    : (["deployment", obs.service_id, obs.execution_id, obs.status] as const);

/** `occurrence`: the nth time the execution entered this status (lib/poll/transitions.ts counts them). */
export const deploymentAlertId = (obs: DeploymentObservation, occurrence = 1) => contentHash(...deploymentAlertKey(obs, occurrence));
export const deliveryAlertId = (r: WebhookDeliveryRecord) => contentHash("webhook_delivery", r.webhook_id, r.id);
export const clusterAlertId = (r: ClusterLogRecord) => contentHash("cluster_log", r.cluster_id, r.id);
/** A closing alert's id: the incident and the record that closed it (`quiet` when a cluster's quiet period did). */
export const targetRecoveredAlertId = (incidentId: string, recordId: string) => contentHash("target_recovered", incidentId, recordId);
export const clusterRecoveredAlertId = (incidentId: string, recordId: string | "quiet") => contentHash("cluster_recovered", incidentId, recordId);

/** An incident's facts as it closes at `closedAt`: how long it lasted and what ended it. */
export function closedIncident(open: Pick<IncidentFacts, "subject" | "opened_at" | "failures">, closedAt: string, resolvedBy: string | undefined): IncidentFacts {
  const from = parseTimestamp(open.opened_at)?.ms;
  const to = parseTimestamp(closedAt)?.ms;
  return compact({
    subject: open.subject, opened_at: open.opened_at, failures: open.failures,
    duration_sec: from === undefined || to === undefined ? undefined : Math.max(0, Math.round((to - from) / 1000)),
    resolved_by: resolvedBy,
  });
}

/** A failure alert placed in its incident: its id, and where it stands in it. */
export const withIncident = (d: LookoutEventDetail, incidentId: string, incident: IncidentFacts): LookoutEventDetail =>
  ({ ...d, incident_id: incidentId, incident });

/** "after 5 failures over 14m": the tail of a closing alert's summary. */
const howLong = (i: IncidentFacts) =>
  [i.failures ? `after ${i.failures} failure${i.failures === 1 ? "" : "s"}` : undefined, i.duration_sec !== undefined ? `over ${formatLasted(i.duration_sec)}` : undefined]
    .filter(Boolean).join(" ");

/** Subjects of incidents (docs/events.md, "Incidents"). */
export const incidentSubject = {
  deployment: (serviceId: string) => `deployment:${serviceId}`,
  webhookTarget: (webhookId: string, targetHost: string | undefined) => `webhook:${webhookId}:${targetHost ?? "unknown"}`,
  cluster: (clusterId: string) => `cluster:${clusterId}`,
};

/** What a recovering deployment did, for people: "DEPLOYED, commit a94a8fe by Dana, triggered by dana@ via GIT". */
export function deploymentResolvedBy(obs: DeploymentObservation): string {
  const c = obs.commit;
  return [
    obs.status,
    c?.id ? `commit ${shortSha(c.id)}${c.author ? ` by ${c.author}` : ""}` : undefined,
    obs.triggered_by ? `triggered by ${obs.triggered_by}${obs.origin ? ` via ${obs.origin}` : ""}` : undefined,
  ].filter(Boolean).join(", ");
}

const VERB: Record<DeploymentTransition, string> = {
  failed: "deployment failed",
  still_failing: "deployment still failing",
  recovered: "recovered",
  cancelled: "deployment cancelled",
};

const firstLine = (s: string | undefined, max = 80) => {
  const line = (s ?? "").split("\n")[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};
const where = (ctx: ServiceContext) => [ctx.project?.name, ctx.environment?.name].filter(Boolean).join("/");

export function deploymentDetail(args: {
  obs: DeploymentObservation;
  transition: DeploymentTransition;
  ctx: ServiceContext;
  observedAt: string;
  previousStatus?: string;
  failureCount?: number;
  incidentId?: string;
  /** Where it stands in the service's incident; on `recovered` the builder adds how long and what ended it. */
  incident?: IncidentFacts;
  /** The nth time the execution entered this status; 1 when absent. */
  occurrence?: number;
}): LookoutEventDetail {
  const { obs, transition, ctx, observedAt } = args;
  const occurredAt = instantOr(obs.updated_at ?? obs.created_at, observedAt);
  const id = deploymentAlertId(obs, args.occurrence);
  const name = ctx.name ?? obs.service_name ?? obs.service_id;
  const place = where(ctx);
  const commit = obs.commit;
  const parts = [
    `${name}${place ? ` (${place})` : ""} ${VERB[transition]}`,
    transition === "recovered" ? `now ${obs.status}` : obs.status,
    transition === "still_failing" && args.failureCount ? `${args.failureCount} failures in a row` : undefined,
    commit?.id ? `commit ${shortSha(commit.id)}${commit.author ? ` by ${commit.author}` : ""}${commit.message ? `: ${firstLine(commit.message, 60)}` : ""}` : undefined,
    obs.triggered_by ? `triggered by ${obs.triggered_by}${obs.origin ? ` via ${obs.origin}` : ""}` : undefined,
  ].filter(Boolean);
  return compact({
    version: EVENT_VERSION,
    id,
    kind: "deployment" as const,
    transition,
    severity: severityOf("deployment", transition, ctx.environment?.type),
    organization: { id: obs.organization_id },
    project: ctx.project,
    environment: ctx.environment,
    service: compact({ id: obs.service_id, name, type: obs.service_type }),
    status: obs.status,
    occurred_at: occurredAt,
    observed_at: observedAt,
    summary: parts.join(" — "),
    record: { type: "deployment_execution" as const, id: obs.execution_id },
    deployment: compact({
      execution_id: obs.execution_id,
      commit: commit ? commitFacts(commit) : undefined,
      triggered_by: obs.triggered_by,
      origin: obs.origin,
      duration: obs.total_duration,
      duration_sec: durationSeconds(obs.total_duration),
      failure_count: args.failureCount,
      previous_status: args.previousStatus,
    }),
    incident_id: transition === "failed" ? id : args.incidentId,
    incident: args.incident && transition === "recovered" ? closedIncident(args.incident, occurredAt, deploymentResolvedBy(obs)) : args.incident,
    link: commit?.link,
  });
}

export function deliveryDetail(r: WebhookDeliveryRecord, observedAt: string): LookoutEventDetail {
  const svc = r.services[0];
  const answered = r.status_code === null || r.status_code === 0 ? "got no answer" : `answered HTTP ${r.status_code}`;
  return compact({
    version: EVENT_VERSION,
    id: deliveryAlertId(r),
    kind: "webhook_delivery" as const,
    transition: "delivery_failed" as const,
    severity: severityOf("webhook_delivery", "delivery_failed"),
    organization: { id: r.organization_id },
    project: svc?.project?.id ? { id: svc.project.id, name: svc.project.name } : undefined,
    environment: svc?.environment?.id ? compact({ id: svc.environment.id, name: svc.environment.name, type: svc.environment.type }) : undefined,
    service: svc ? compact({ id: svc.id, name: svc.name, type: svc.type }) : undefined,
    webhook: { id: r.webhook_id },
    status: r.status_code === null ? "NO_RESPONSE" : String(r.status_code),
    occurred_at: instantOr(r.created_at, observedAt),
    observed_at: observedAt,
    summary: `Webhook delivery${r.matched_event ? ` of ${r.matched_event}` : ""} to ${r.target_host ?? "its target"} ${answered}`,
    record: { type: "webhook_delivery" as const, id: r.id },
    http: compact({
      delivery_id: r.id,
      status_code: r.status_code,
      target_host: r.target_host,
      matched_event: r.matched_event,
      delivery_kind: r.delivery_kind,
      response_excerpt: r.response_excerpt,
    }),
  });
}

/** The organization's configured name (`watch[].name`), when there is one. */
export function withOrganizationName(d: LookoutEventDetail, names: ReadonlyMap<string, string> | undefined): LookoutEventDetail {
  const name = names?.get(d.organization.id);
  return name && !d.organization.name ? { ...d, organization: { ...d.organization, name } } : d;
}

export function clusterDetail(r: ClusterLogRecord, observedAt: string, cluster?: NamedRef): LookoutEventDetail {
  const tag = r.error?.tag;
  const message = r.error?.message ?? r.message ?? r.error?.underlying;
  return compact({
    version: EVENT_VERSION,
    id: clusterAlertId(r),
    kind: "cluster_log" as const,
    transition: "cluster_error" as const,
    severity: severityOf("cluster_log", "cluster_error"),
    organization: { id: r.organization_id },
    cluster: { id: r.cluster_id, ...(cluster?.name ? { name: cluster.name } : {}) },
    status: r.type ?? "error",
    occurred_at: instantOr(r.timestamp, observedAt),
    observed_at: observedAt,
    summary: `Cluster ${cluster?.name ?? r.cluster_id} ${tag ?? "error"}${r.step ? ` at ${r.step}` : ""}${message ? `: ${firstLine(message, 100)}` : ""}`,
    error: compact({ tag, message, hint: r.error?.hint, link: r.error?.link, step: r.step }),
    record: compact({ type: "cluster_log_entry" as const, id: r.id, timestamp: r.timestamp, step: r.step }),
    link: r.error?.link,
  });
}

/** The close of a webhook target's incident: the 2xx delivery `r` answered after its failures. */
export function targetRecoveredDetail(
  r: WebhookDeliveryRecord, close: ClosingIncident, observedAt: string,
): LookoutEventDetail {
  const host = r.target_host ?? "its target";
  return compact({
    version: EVENT_VERSION,
    id: targetRecoveredAlertId(close.incident_id, r.id),
    kind: "webhook_delivery" as const,
    transition: "target_recovered" as const,
    severity: severityOf("webhook_delivery", "target_recovered"),
    organization: { id: r.organization_id },
    ...close.refs,
    webhook: { id: r.webhook_id },
    status: String(r.status_code),
    occurred_at: instantOr(r.created_at, observedAt),
    observed_at: observedAt,
    summary: `Webhook target ${host} recovered — HTTP ${r.status_code}${howLong(close.incident) ? ` ${howLong(close.incident)}` : ""}`,
    record: { type: "webhook_delivery" as const, id: r.id },
    http: compact({ delivery_id: r.id, status_code: r.status_code, target_host: r.target_host, matched_event: r.matched_event, delivery_kind: r.delivery_kind }),
    incident_id: close.incident_id,
    incident: close.incident,
  });
}

/**
 * The close of a cluster's incident: by the successful step `r`, or by the quiet period (no record;
 * `at` is when the period ended).
 */
export function clusterRecoveredDetail(
  src: { organization_id: string; cluster_id: string }, close: ClosingIncident & { closed_at: string },
  observedAt: string, cluster?: NamedRef, r?: ClusterLogRecord,
): LookoutEventDetail {
  const name = cluster?.name ?? src.cluster_id;
  const how = r?.step ? `step ${r.step}` : close.incident.resolved_by;
  return compact({
    version: EVENT_VERSION,
    id: clusterRecoveredAlertId(close.incident_id, r?.id ?? "quiet"),
    kind: "cluster_log" as const,
    transition: "cluster_recovered" as const,
    severity: severityOf("cluster_log", "cluster_recovered"),
    organization: { id: src.organization_id },
    cluster: { id: src.cluster_id, ...(cluster?.name ? { name: cluster.name } : {}) },
    status: r?.type ?? "quiet",
    occurred_at: close.closed_at,
    observed_at: observedAt,
    summary: `Cluster ${name} recovered${how ? ` — ${how}` : ""}${howLong(close.incident) ? ` ${howLong(close.incident)}` : ""}`,
    record: r ? compact({ type: "cluster_log_entry" as const, id: r.id, timestamp: r.timestamp, step: r.step }) : undefined,
    incident_id: close.incident_id,
    incident: close.incident,
  });
}

/** What a closing alert needs of its incident. */
export interface ClosingIncident {
  incident_id: string;
  incident: IncidentFacts;
  /** The opening alert's project, environment and service. */
  refs?: Pick<LookoutEventDetail, "project" | "environment" | "service">;
}
