/**
 * "Why was nobody told?" — everything Lookout knows about one record, execution or alert: the record as
 * it was read (redacted), each status the execution went through, each alert raised, each receiver it
 * was routed to with the outcome, and every suppression with its reason. The shapes here and the pure
 * assembly; lib/audit/trail.ts fetches the items.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { clusterAlertId, deliveryAlertId, deploymentAlertId } from "../alerts/build.js";
import { enteredCounts } from "../poll/transitions.js";
import type { ExecutionState } from "../model/transitions.js";
import type { ClusterLogRecord, DeploymentObservation, WebhookDeliveryRecord } from "../model/observations.js";
import { redact } from "../platform/redact.js";
import type { IncidentActionRecord, Mute } from "../model/notify-store.js";
import { executionEntryId } from "../model/audit-row.js";
import { auditRowOf } from "../model/audit-index.js";
import { DEFAULT_ROUTE, FALLBACK_ROUTE } from "../config/route-types.js";

export interface ExplainedRecord {
  type: "record";
  id: string;
  kind: string;
  occurred_at: string;
  observed_at: string;
  /** The record as it was read: normalized and redacted when stored, redacted again when shown. */
  record: Record<string, unknown>;
}

export interface ExplainedExecution {
  type: "execution";
  id: string;
  service_id: string;
  execution_id: string;
  status: string;
  first_seen_at: string;
  first_seen_status: string;
  /** The latest read of the execution (redacted). */
  observation: Record<string, unknown>;
  /** Each status Lookout saw it in, oldest first. */
  history: Array<{ status: string; observed_at: string }>;
}

export interface ExplainedDelivery {
  route: string;
  receiver: string;
  /** sent, suppressed, held, failed, sending. */
  state: string;
  attempts: number;
  updated_at: string;
  error?: string;
  /** The failure was one retries cannot fix (a secret missing, a revoked webhook): not retried. */
  permanent?: boolean;
  /** The `Lookout Health` event (receiver_failing) the failure raised. */
  health_id?: string;
  /** Slack message ts, email Message-ID: where it was posted. */
  ts?: string;
  message_id?: string;
  suppression?: { reason: string; detail: string; mute?: Mute };
  /** Sent within a storm digest: the digest and how its own delivery went. */
  digest?: { id: string; state?: string; updated_at?: string };
  /** An escalation's delivery: the route whose escalation it is (docs/actions.md, "Escalation"). */
  escalation?: string;
  /** The receiver only showed it and told nobody (a preview; docs/audit.md, "Onlookers"). */
  onlooker?: boolean;
}

/** A route's escalation of the incident this alert opened for it: pending, escalated or cancelled, and why. */
export interface ExplainedEscalation {
  route: string;
  state: string;
  due_at: string;
  settled_at?: string;
  reason?: string;
}

export interface ExplainedAlert {
  id: string;
  kind: string;
  transition: string;
  severity: string;
  status?: string;
  occurred_at: string;
  /** When Lookout raised it. */
  raised_at: string;
  summary: string;
  incident_id?: string;
  /** Put on the bus (routes and receivers see it) or kept quiet. */
  published: boolean;
  /** Why it was kept quiet (first-sight backfill). Mutes and storms are per receiver, on deliveries. */
  suppression?: { reason: string; detail: string };
  deliveries: ExplainedDelivery[];
  /** What people did from its message (docs/actions.md), oldest first. */
  actions?: ExplainedAction[];
  /** The escalations of its incident scheduled by its delivery (docs/actions.md, "Escalation"). */
  escalations?: ExplainedEscalation[];
  /** One line for people: who was told, or why nobody was. */
  verdict: string;
}

/** A click on the alert's message: who, what, when, where. */
export interface ExplainedAction {
  kind: string;
  by: { id: string; name: string };
  at: string;
  /** The Slack channel id and message ts the button was on. */
  channel: string;
  message_ts: string;
  /** What came of it: acknowledged, muted, or why nothing was done (already_acknowledged, already_resolved, …). */
  outcome?: string;
}

/** A record that could not be stored, or an alert that could not be published, set aside. */
export interface ExplainedQuarantine {
  stage: "ingest" | "publish";
  kind: string;
  source: string;
  quarantined_at: string;
  reason: string;
  /** The record or alert as it was, redacted and clipped to a few KB. */
  excerpt: string;
  /** The `Lookout Health` alert that said so. */
  health_alert_id?: string;
}

export interface Explanation {
  /** The id that was asked about. */
  id: string;
  subject?: ExplainedRecord | ExplainedExecution;
  /** When it was quarantined (at ingest, at publish). */
  quarantined?: ExplainedQuarantine[];
  alerts: ExplainedAlert[];
}

export type { StoredItem } from "../model/audit-items.js";
import type { StoredItem } from "../model/audit-items.js";

/** The explain id of what raised an alert, from the alert alone. */
export function alertSourceId(alert: StoredItem): string | undefined {
  const fromRow = auditRowOf(alert)?.source;
  if (fromRow) return fromRow;
  const d = alert.detail as LookoutEventDetail | undefined;
  if (d?.kind === "deployment" && d.service?.id && d.deployment?.execution_id) return executionEntryId(d.service.id, d.deployment.execution_id);
  return undefined;
}

/** The ids of the alerts a record or execution can have raised (alert ids are derived from content). */
export function alertIdsOf(subject: StoredItem): string[] {
  if (subject.item_type === "record") {
    const r = subject.record as { record_kind?: string } | undefined;
    if (r?.record_kind === "webhook_delivery") return [deliveryAlertId(r as WebhookDeliveryRecord)];
    if (r?.record_kind === "cluster_log") return [clusterAlertId(r as ClusterLogRecord)];
    return [];
  }
  if (subject.item_type === "execution") {
    // One id per status and per time the execution entered it (lib/poll/transitions.ts).
    const state = subject.state as ExecutionState & { observation: DeploymentObservation };
    const counts = enteredCounts(state);
    if (!counts.has(state.status)) counts.set(state.status, 1);
    return [...counts].flatMap(([status, n]) =>
      Array.from({ length: n }, (_, i) => deploymentAlertId({ ...state.observation, status }, i + 1)));
  }
  return [];
}

export function explainSubject(item: StoredItem): ExplainedRecord | ExplainedExecution | undefined {
  if (item.item_type === "record") {
    const record = item.record as Record<string, unknown> & { id: string; record_kind: string };
    return {
      type: "record", id: record.id, kind: record.record_kind,
      occurred_at: item.occurred_at as string, observed_at: item.observed_at as string,
      record: redact(record),
    };
  }
  if (item.item_type === "execution") {
    const s = item.state as {
      status: string; first_seen_at: string; first_seen_status: string; observation: DeploymentObservation;
      history?: Array<{ status: string; observed_at: string }>;
    };
    return {
      type: "execution", id: executionEntryId(s.observation.service_id, s.observation.execution_id),
      service_id: s.observation.service_id, execution_id: s.observation.execution_id, status: s.status,
      first_seen_at: s.first_seen_at, first_seen_status: s.first_seen_status,
      observation: redact(s.observation) as unknown as Record<string, unknown>, history: s.history ?? [],
    };
  }
  return undefined;
}

export function explainQuarantine(item: StoredItem): ExplainedQuarantine {
  return {
    stage: item.stage === "publish" ? "publish" : "ingest", kind: String(item.kind ?? ""), source: String(item.source ?? ""),
    quarantined_at: String(item.quarantined_at ?? ""), reason: String(item.reason ?? ""), excerpt: String(item.excerpt ?? ""),
    ...(item.health_alert_id ? { health_alert_id: String(item.health_alert_id) } : {}),
  };
}

export interface DeliveryFacts {
  record: StoredItem;
  mute?: Mute;
  digest?: StoredItem;
}

function explainDelivery({ record: d, mute, digest }: DeliveryFacts): ExplainedDelivery {
  const suppression = d.suppression as { reason: string; detail: string } | undefined;
  const out: ExplainedDelivery = {
    route: String(d.route ?? ""), receiver: String(d.receiver_label ?? d.receiver_id ?? ""), state: String(d.state ?? ""),
    attempts: Number(d.attempts ?? 0), updated_at: String(d.updated_at ?? ""),
  };
  if (d.error) out.error = String(d.error);
  if (d.permanent) out.permanent = true;
  if (d.health_id) out.health_id = String(d.health_id);
  if (d.escalation) out.escalation = String(d.escalation);
  if (d.onlooker) out.onlooker = true;
  if (d.ts) out.ts = String(d.ts);
  if (d.message_id) out.message_id = String(d.message_id);
  if (suppression) out.suppression = { reason: suppression.reason, detail: suppression.detail, ...(mute ? { mute } : {}) };
  if (d.digest_id) {
    out.digest = {
      id: String(d.digest_id),
      ...(digest?.state ? { state: String(digest.state) } : {}),
      ...(digest?.updated_at ? { updated_at: String(digest.updated_at) } : {}),
    };
  }
  return out;
}

/** What an onlooker's delivery adds, for people: it was only shown, and counts as nobody told. */
export const ONLOOKER = "(preview; nobody told)";

/** Which route a delivery came from, for people: the default route and the fallback say why. */
function routePhrase(route: string): string {
  if (route === DEFAULT_ROUTE) return "the default route: no route matched it";
  if (route === FALLBACK_ROUTE) return "the fallback, after a receiver failed";
  return `route ${route}`;
}

function deliveryPhrase(d: ExplainedDelivery): string {
  if (d.onlooker) {
    const { onlooker, ...delivery } = d;
    return d.state === "sent" ? `shown in ${d.receiver} ${ONLOOKER}` : `${deliveryPhrase(delivery)} ${ONLOOKER}`;
  }
  if (d.escalation) {
    const { escalation, ...delivery } = d;
    return `escalation of route ${escalation}: ${deliveryPhrase(delivery)}`;
  }
  const to = `${d.receiver} (${routePhrase(d.route)})`;
  if (d.suppression?.reason === "mute") return `not ${to}: muted${d.suppression.mute ? ` by ${d.suppression.mute.created_by}: ${d.suppression.mute.reason}` : ""}`;
  if (d.state === "sent" && d.digest) return `${to} in storm digest ${d.digest.id}`;
  if (d.state === "sent") return to;
  if (d.state === "held") return `not yet ${to}: held back by the storm budget for a digest (${d.suppression?.detail ?? "over budget"}), due within notify.digest_within`;
  if (d.state === "sending") return `not yet ${to}: being sent (attempt ${d.attempts}); if its sender died, another takes over when the lease ends`;
  if (d.state === "failed") {
    const why = `${d.error ? ` (${d.error})` : ""}${d.permanent ? ", not retried: retrying cannot fix it" : ""}`;
    const retry = d.permanent ? "" : "; it will be retried (SQS redelivers it; on one machine, the next run)";
    return `not ${to}: failed after ${d.attempts} attempt(s)${why}${d.health_id ? `; health event ${d.health_id} raised (receiver_failing)` : ""}${retry}`;
  }
  return `${to}: ${d.state}`;
}

/** An escalation for people: when it is due, or what became of it. */
function escalationPhrase(e: ExplainedEscalation): string {
  if (e.state === "pending") return `route ${e.route} escalates it at ${e.due_at} unless it is acknowledged or closed first`;
  if (e.state === "escalated") return `route ${e.route} escalated it at ${e.settled_at ?? e.due_at}: nobody acknowledged it within its escalate.after`;
  return `route ${e.route}'s escalation (due ${e.due_at}) was cancelled${e.reason ? `: ${e.reason}` : ""}`;
}

export function verdictOf(a: Pick<ExplainedAlert, "published" | "suppression" | "deliveries" | "escalations">): string {
  if (!a.published) return `nobody was told: ${a.suppression ? `${a.suppression.reason} — ${a.suppression.detail}` : "not published"}`;
  if (!a.deliveries.length) return "published, but no receiver has a delivery: no route matched it and there is no notify.default, or it is not delivered yet";
  const told = a.deliveries.filter((d) => d.state === "sent" && !d.onlooker && !d.escalation);
  const phrases = [...a.deliveries.map(deliveryPhrase), ...(a.escalations ?? []).map(escalationPhrase)];
  return `${told.length ? "told" : "nobody was told"}: ${phrases.join("; ")}`;
}

export function explainAlert(alert: StoredItem, deliveries: DeliveryFacts[], escalations: readonly StoredItem[] = [], actions: IncidentActionRecord[] = []): ExplainedAlert {
  const d = alert.detail as LookoutEventDetail;
  const suppression = alert.suppression as { reason: string; detail: string } | undefined;
  // The story in order: the routes' receivers, then the fallback that stood in for a failed one.
  const rank = (route: string) => (route === FALLBACK_ROUTE ? 1 : 0);
  const explained = deliveries
    .map(explainDelivery)
    .sort((a, b) => rank(a.route) - rank(b.route) || a.route.localeCompare(b.route) || a.receiver.localeCompare(b.receiver));
  const out: Omit<ExplainedAlert, "verdict"> = {
    id: d.id, kind: d.kind, transition: d.transition, severity: d.severity,
    ...(d.status ? { status: d.status } : {}),
    occurred_at: d.occurred_at, raised_at: String(alert.created_at ?? d.observed_at), summary: d.summary,
    ...(d.incident_id ? { incident_id: d.incident_id } : {}),
    published: alert.state === "pending",
    ...(suppression ? { suppression: { reason: suppression.reason, detail: suppression.detail } } : {}),
    deliveries: explained,
    ...(escalations.length ? { escalations: escalations.map(explainEscalation) } : {}),
  };
  // The clicks on this alert's own message (an incident's clicks are read once, for all its alerts).
  const mine = actions.filter((x) => x.alert_id === d.id).map(({ kind, by, at, channel, message_ts, outcome }) => ({ kind, by, at, channel, message_ts, ...(outcome ? { outcome } : {}) }));
  return { ...out, ...(mine.length ? { actions: mine } : {}), verdict: verdictOf(out) };
}

function explainEscalation(e: StoredItem): ExplainedEscalation {
  return {
    route: String(e.route ?? ""), state: String(e.state ?? ""), due_at: String(e.due_at ?? ""),
    ...(e.settled_at ? { settled_at: String(e.settled_at) } : {}), ...(e.reason ? { reason: String(e.reason) } : {}),
  };
}
