/**
 * Audit rows: what the audit indexes store and project for each execution, record and alert, and how
 * each is derived from what is stored. Pure. docs/audit.md describes them for people.
 */
import type { EventKind, LookoutEventDetail, Severity, Transition } from "./event.js";
import type { ClusterLogRecord, DeploymentObservation, ServiceContext, WebhookDeliveryRecord } from "./observations.js";
import { instantOr, readPlatformTime } from "./time.js";
import { compact } from "./compact.js";
import type { IncidentActionKind } from "./incident-action.js";

/**
 * What a row stands for: a deployment execution (latest status), a record read, an alert raised, a
 * record or alert quarantined (it could not be stored or published), or what a person did from an
 * alert's message (acknowledge, mute; docs/audit.md).
 */
export const ENTRY_TYPES = ["execution", "record", "alert", "quarantine", "action"] as const;

export type EntryType = (typeof ENTRY_TYPES)[number];

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
  /** A failure retrying cannot fix: not retried. */
  permanent?: boolean;
  /** The receiver only showed it and told nobody (a preview; docs/audit.md, "Onlookers"). */
  onlooker?: boolean;
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
  /** Executions: when the deployed commit was made (the platform's `details.commit.created_at`), when known. */
  commit_at?: string;
  /**
   * Executions: when the platform last changed the execution (`auditing_data.updated_at`): for a
   * finished one, when it finished (the report's deploy time; docs/report.md).
   */
  updated_at?: string;
  summary: string;
  /** Alerts: published to the bus (pending) or kept quiet (suppressed, with the reason). */
  state?: "pending" | "suppressed";
  suppression?: { reason: string; detail: string };
  /** Quarantine: the stage that could not go on (store the record, publish the alert) and why. */
  stage?: "ingest" | "publish";
  reason?: string;
  /** Alerts: the explain id of the record or execution that raised it. */
  source?: string;
  /** Alerts: the alert that opened the incident this one belongs to (its own id on the opening alert). */
  incident_id?: string;
  /** Alerts: when that incident opened (its first failure's `occurred_at`). */
  incident_opened_at?: string;
  /** Alerts: who was told (joined when read, never stored). */
  deliveries?: DeliveryRow[];
}

/** Summaries stay short: rows are copied into every index the item is in. */
const MAX_SUMMARY = 240;

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

/** The explain id of an execution: `<service id>:<execution id>` (no slash, so it fits in a URL path segment). */
export const executionEntryId = (serviceId: string, executionId: string) => `${serviceId}:${executionId}`;

export function parseExecutionEntryId(id: string): { serviceId: string; executionId: string } | undefined {
  const i = id.indexOf(":");
  return i > 0 && i < id.length - 1 ? { serviceId: id.slice(0, i), executionId: id.slice(i + 1) } : undefined;
}

type StoredRecord = { record_kind: string; id: string; organization_id: string };

/** A webhook delivery's status: its target's HTTP status code, or this. */
const NO_RESPONSE = "NO_RESPONSE";

/** Whether a webhook delivery's row can have this status (upper case): a number, or no response. */
export const isDeliveryStatus = (status: string) => status === NO_RESPONSE || !/^[A-Z_]*$/.test(status);

/** A webhook delivery or cluster log entry as read. */
export function recordRow(record: StoredRecord, occurredAt: string, observedAt: string): AuditRow {
  const at = isoInstant(occurredAt, observedAt);
  if (record.record_kind === "cluster_log") {
    const r = record as ClusterLogRecord;
    const message = r.error?.message ?? r.message;
    return compact<AuditRow>({
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
  return compact<AuditRow>({
    type: "record", id: r.id, kind: "webhook_delivery", at, observed_at: observedAt,
    status: code === null || code === undefined ? NO_RESPONSE : String(code),
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
  return compact<AuditRow>({
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
    // Only a readable, plausible time: the report never guesses a commit's time (docs/report.md).
    commit_at: readPlatformTime(commit?.created_at, firstSeenAt).iso,
    updated_at: obs.updated_at,
    summary: clip(parts.join(" — ")),
  });
}

/** Where an alert happened: its organization, and its project, environment, service, cluster or webhook. */
const whereOf = (detail: LookoutEventDetail) => ({
  organization: detail.organization.id,
  project: ref(detail.project),
  environment: ref(detail.environment),
  service: ref(detail.service),
  cluster: ref(detail.cluster),
  webhook: ref(detail.webhook),
});

/** An alert as raised, with its suppression when it was kept quiet. */
export function alertRow(detail: LookoutEventDetail, suppression?: { reason: string; detail: string }): AuditRow {
  return compact<AuditRow>({
    type: "alert", id: detail.id, kind: detail.kind,
    at: isoInstant(detail.occurred_at, detail.observed_at),
    observed_at: detail.observed_at,
    status: detail.status,
    transition: detail.transition,
    severity: detail.severity,
    ...whereOf(detail),
    actor: detail.deployment?.triggered_by,
    commit: detail.deployment?.commit?.id?.toLowerCase(),
    summary: clip(detail.summary),
    source: detail.kind === "deployment" && detail.service?.id && detail.deployment?.execution_id
      ? executionEntryId(detail.service.id, detail.deployment.execution_id) : undefined,
    incident_id: detail.incident_id,
    incident_opened_at: detail.incident?.opened_at ? isoInstant(detail.incident.opened_at, detail.observed_at) : undefined,
    state: suppression ? "suppressed" : "pending",
    suppression: suppression ? { reason: suppression.reason, detail: suppression.detail } : undefined,
  });
}

/** What a button did, for people (audit rows, `lookout explain`). */
export const ACTION_WORDS: Record<string, string> = {
  acknowledge: "Acknowledged",
  mute_1h: "Muted for an hour",
  mute_until_resolved: "Muted until resolved",
};

/**
 * A click on an alert's message (docs/actions.md): the alert's id (what `lookout explain` takes), its
 * service, environment, cluster or webhook, and who clicked as the actor, at the time of the click.
 */
export function actionRow(
  action: { kind: IncidentActionKind; by: { id: string; name: string }; at: string },
  detail: LookoutEventDetail,
): AuditRow {
  const who = action.by.name || action.by.id;
  return compact<AuditRow>({
    type: "action", id: detail.id, kind: detail.kind,
    at: isoInstant(action.at, action.at),
    observed_at: action.at,
    severity: detail.severity,
    ...whereOf(detail),
    actor: `slack:${who}`,
    summary: clip(`${ACTION_WORDS[action.kind] ?? action.kind} by ${who} in Slack: ${firstLine(detail.summary, 160)}`),
  });
}
