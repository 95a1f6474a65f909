/**
 * One alert's view: what every kind shares (header words, place, deployment facts, commit, error,
 * notes, links), with the kind's own part taken from a table keyed by kind. Pure.
 */
import type { CommitFacts, DetailType, EventKind, LookoutEventDetail, Severity } from "../../model/event.js";
import { detailTypeOf, isClosing } from "../../model/event.js";
import { safeHttpUrl } from "./escape.js";
import { answerText, firstLine, formatElapsed, formatSpan, nameOf, oneLine, parseInstant, typedNameOf } from "./format.js";
import type { AddFact, AlertView, ChangesView, CommitView, ErrorView, Fact, IncidentView, KindView, LinkFact } from "./types.js";
import { clusterView } from "./cluster.js";
import { deploymentView } from "./deployment.js";
import { healthView } from "./health.js";
import { webhookView } from "./webhook.js";

const KIND_VIEWS: Record<EventKind, KindView> = {
  deployment: deploymentView,
  webhook_delivery: webhookView,
  cluster_log: clusterView,
  health: healthView,
};

/** A kind newer than this code is shown as a deployment is. */
const kindView = (detail: LookoutEventDetail): KindView => KIND_VIEWS[detail.kind] ?? deploymentView;

const SEVERITY_EMOJI: Record<string, string> = { critical: "🚨", error: "🔴", warning: "🟠", info: "🔵" };

/** The header's emoji: ✅ for what closes an incident, ⚪ for a cancel, else the severity's. */
export function emojiOf(transition: string, severity: Severity): string {
  if (isClosing(transition as never)) return "✅";
  if (transition === "cancelled") return "⚪";
  return SEVERITY_EMOJI[severity] ?? "🔔";
}

const TRANSITION_WORDS: Record<string, [string, string]> = {
  failed: ["FAILED", "Deployment failed"],
  still_failing: ["STILL FAILING", "Deployment still failing"],
  recovered: ["RECOVERED", "Deployment recovered"],
  cancelled: ["CANCELLED", "Deployment cancelled"],
  changes_listed: ["CHANGES LISTED", "What changed before the failure"],
  delivery_failed: ["WEBHOOK FAILED", "Webhook delivery failed"],
  target_recovered: ["RECOVERED", "Webhook target recovered"],
  cluster_error: ["CLUSTER ERROR", "Cluster error"],
  cluster_recovered: ["RECOVERED", "Cluster recovered"],
};

/** Commits shown in "What changed"; the rest are counted. */
export const CHANGES_SHOWN = 5;

/** The detail-type, or a safe stand-in for a (kind, transition) pair newer than this code. */
export function detailTypeOfDetail(detail: LookoutEventDetail): DetailType {
  try {
    return detailTypeOf(detail.kind, detail.transition);
  } catch {
    return detail.kind === "health" ? "Lookout Health" : "Deployment Failed";
  }
}

/** A commit as shown: short id, first line of its message, author, tag, a safe link. */
export function commitView(c: CommitFacts): CommitView {
  const shortId = c.short_id ?? c.id?.slice(0, 7);
  const commit: CommitView = {};
  if (shortId) commit.shortId = oneLine(shortId);
  if (c.message) commit.subject = firstLine(c.message);
  if (c.author) commit.author = oneLine(c.author);
  if (c.tag) commit.tag = oneLine(c.tag);
  const url = safeHttpUrl(c.link);
  if (url) commit.url = url;
  return commit;
}

/** At most five commits, whatever the list holds, and how many more there are. */
export function changesView(detail: LookoutEventDetail): ChangesView | undefined {
  const ch = detail.deployment?.changes;
  if (!ch) return undefined;
  const listed = Array.isArray(ch.commits) ? ch.commits : [];
  const commits = listed.slice(0, CHANGES_SHOWN).map(commitView);
  const total = Number.isFinite(ch.total) ? Math.max(ch.total, listed.length) : listed.length;
  const view: ChangesView = { commits, more: Math.max(0, total - commits.length), atLeast: Boolean(ch.more), total };
  if (typeof ch.since_commit === "string") view.since = oneLine(ch.since_commit).slice(0, 12);
  if (typeof ch.until_commit === "string") view.until = oneLine(ch.until_commit).slice(0, 12);
  if (ch.note) view.note = oneLine(ch.note);
  return view;
}

function incidentView(detail: LookoutEventDetail): IncidentView | undefined {
  const i = detail.incident;
  if (!i) return undefined;
  const view: IncidentView = { openedRaw: i.opened_at, repeat: !!i.repeat };
  if (i.failures !== undefined && Number.isFinite(i.failures)) view.failures = i.failures;
  const lasted = formatSpan(i.duration_sec);
  if (lasted) view.lasted = lasted;
  if (i.resolved_by) view.resolvedBy = oneLine(i.resolved_by);
  return view;
}

function errorView(detail: LookoutEventDetail): ErrorView | undefined {
  const e = detail.error;
  if (!e || !(e.tag || e.message || e.hint || e.step || e.link)) return undefined;
  const error: ErrorView = {};
  if (e.tag) error.tag = oneLine(e.tag);
  if (e.step) error.step = oneLine(e.step);
  if (e.message) error.message = e.message.trim();
  if (e.hint) error.hint = e.hint.trim();
  const url = safeHttpUrl(e.link);
  if (url) error.url = url;
  return error;
}

/** The fields, in the order shown: the kind's leading ones, service and place, the kind's, the deployment's. */
function fieldsOf(detail: LookoutEventDetail, kind: KindView): Fact[] {
  const fields: Fact[] = [];
  const add: AddFact = (label, value) => {
    if (value === undefined || value === null || value === "") return;
    fields.push({ label, value: oneLine(String(value)) });
  };
  const project = nameOf(detail.project);
  const environment = nameOf(detail.environment);
  kind.leadingFields?.(detail, add);
  add(kind.serviceLabel ?? "Service", typedNameOf(detail.service));
  add("Cluster", nameOf(detail.cluster));
  if (project || environment) {
    add("Project / environment", [project, environment && typedNameOf(detail.environment)].filter(Boolean).join(" / "));
  }
  kind.fields?.(detail, add);
  const d = detail.deployment;
  if (d) {
    if (d.triggered_by || d.origin) {
      // The member's name from the platform when known, with what the platform recorded beside it.
      const who = d.triggered_by_name && d.triggered_by && d.triggered_by_name !== d.triggered_by ? `${d.triggered_by_name} (${d.triggered_by})` : d.triggered_by;
      add("Triggered by", who ? `${who}${d.origin ? ` via ${d.origin}` : ""}` : `via ${d.origin}`);
    }
    add("Duration", formatElapsed(d.duration_sec, d.duration));
    add(detail.transition === "recovered" ? "Failures before recovery" : "Failures in a row", d.failure_count);
  }
  add("Organization", detail.organization.name ?? detail.organization.id);
  return fields;
}

export function alertView(detail: LookoutEventDetail): AlertView {
  const kind = kindView(detail);
  const detailType = detailTypeOfDetail(detail);
  const [transition, title] = TRANSITION_WORDS[detail.transition] ??
    kind.unnamedTransition?.(detail) ?? [detail.transition.toUpperCase(), detailType];
  const emoji = emojiOf(detail.transition, detail.severity);

  const project = nameOf(detail.project);
  const environment = nameOf(detail.environment);
  const place = project && environment ? `${project}/${environment}` : (project ?? environment);
  const subject = kind.subject(detail);
  const where = environment ? `${environment}/${subject}` : subject;
  const what = kind.what(detail);

  const commit = detail.deployment?.commit ? commitView(detail.deployment.commit) : undefined;
  const error = errorView(detail);

  const notes: Fact[] = [];
  if (detail.http?.response_excerpt) notes.push({ label: "Response", value: answerText(detail.http.response_excerpt) });
  if (detail.health?.detail) notes.push({ label: "Detail", value: detail.health.detail.trim() });

  const links: LinkFact[] = [];
  const addLink = (label: string, url: string | undefined) => {
    if (url && !links.some((l) => l.url === url)) links.push({ label, url });
  };
  addLink("View commit", commit?.url);
  addLink("Error docs", error?.url);
  addLink("Open link", safeHttpUrl(detail.link));

  const view: AlertView = {
    detailType,
    transition,
    title,
    emoji,
    subject: oneLine(subject),
    where: oneLine(where),
    summary: oneLine(detail.summary),
    fields: fieldsOf(detail, kind),
    notes,
    links,
    occurredRaw: detail.occurred_at,
    id: detail.id,
    closing: isClosing(detail.transition),
  };
  const incident = incidentView(detail);
  if (incident) view.incident = incident;
  const changes = changesView(detail);
  if (changes) view.changes = changes;
  if (place) view.place = oneLine(place);
  if (what) view.what = oneLine(what);
  if (commit) view.commit = commit;
  if (error) view.error = error;
  const at = parseInstant(detail.occurred_at);
  if (at) view.occurredAt = at;
  if (detail.incident_id && detail.incident_id !== detail.id) view.incidentId = detail.incident_id;
  if (detail.deployment?.execution_id) view.executionId = oneLine(detail.deployment.execution_id);
  return view;
}
