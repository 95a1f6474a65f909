/**
 * PagerDuty Events API v2 events (docs/receivers.md, "PagerDuty"): pure functions from a detail to the
 * event Lookout enqueues, without the routing key (the channel adds it, so golden files never hold it).
 *
 * ONE PAGERDUTY ALERT PER INCIDENT. `dedup_key` is the incident's id (the opening alert's), so the
 * opening and every follow-up are `trigger`s PagerDuty folds into one alert (each added to its log), and
 * the close is a `resolve` of that key. Lookout's health has no close: its key is its check and subject,
 * so a receiver failing again folds into the alert already open. What PagerDuty shows comes from the
 * detail as stored, which is redacted where it is read (lib/platform/redact.ts); custom_details are
 * redacted again and bounded, the summary one line of at most 1024 characters (PagerDuty's limit).
 */
import { isClosing, type LookoutEventDetail, type Severity } from "../../model/event.js";
import { clipStrings } from "../../model/bounds.js";
import { redact } from "../../platform/redact.js";
import type { Presentation } from "../types.js";
import { alertView, changesView, clip, commitLine, incidentFacts, incidentState, oneLine, safeHttpUrl, type LinkFact } from "../view/index.js";

export const PAGERDUTY_SUMMARY_MAX = 1024;
/** PagerDuty's `source`, `component`, `group` and `class` are short strings: kept to this. */
const FIELD_MAX = 255;
/** custom_details are bounded well below PagerDuty's 512 KB per event. */
export const CUSTOM_DETAILS_MAX_BYTES = 16 * 1024;
const LINKS_MAX = 10;

export interface PagerDutyLink {
  href: string;
  text: string;
}

export interface PagerDutyPayload {
  summary: string;
  source: string;
  severity: Severity;
  timestamp?: string;
  component?: string;
  group?: string;
  class?: string;
  custom_details?: Record<string, unknown>;
}

/** An event as enqueued, the routing key left out. */
export interface PagerDutyEvent {
  event_action: "trigger" | "resolve";
  dedup_key: string;
  payload?: PagerDutyPayload;
  client?: string;
  links?: PagerDutyLink[];
}

export interface PagerDutyRenderOptions {
  presentation?: Presentation;
  /** The receiver's `source` (default: where the event is, `environment/service`). */
  source?: string;
  /** A digest sent it: how many alerts of its key the storm held, and the digest's id, for custom_details. */
  held?: number;
  digestId?: string;
}

/** The PagerDuty alert an event belongs to: its incident, or for Lookout's health its check and subject. */
export function dedupKeyOf(detail: LookoutEventDetail): string {
  if (detail.kind === "health") return clip(oneLine(`lookout-health:${detail.health?.check ?? detail.transition}:${detail.health?.subject ?? detail.organization.id}`), FIELD_MAX);
  return detail.incident_id ?? detail.id;
}

const short = (s: string | undefined) => (s ? clip(oneLine(s), FIELD_MAX) : undefined);

function linksOf(detail: LookoutEventDetail, presentation: Presentation | undefined, ownLinks: readonly LinkFact[]): PagerDutyLink[] {
  const out: PagerDutyLink[] = [];
  for (const l of [...(presentation?.links ?? []), ...ownLinks]) {
    const href = safeHttpUrl(l.url);
    if (href && !out.some((x) => x.href === href)) out.push({ href, text: clip(oneLine(l.label), 100) || "Link" });
  }
  return out.slice(0, LINKS_MAX);
}

/** What a responder reads under the alert: the same facts as the other receivers, as data. */
function customDetails(detail: LookoutEventDetail, severity: Severity, held: number | undefined, digestId: string | undefined): Record<string, unknown> {
  const v = alertView({ ...detail, severity });
  const details: Record<string, unknown> = {
    state: incidentState(detail, v.transition),
    what: v.title,
    summary: v.summary,
    ...Object.fromEntries(v.fields.map((f) => [f.label, f.value])),
  };
  for (const f of incidentFacts(detail)) details[f.label] = f.value;
  if (v.error) details.error = { ...v.error };
  if (v.commit) details.commit = { ...v.commit };
  const ch = changesView(detail);
  if (ch) details.what_changed = { total: ch.total, commits: ch.commits.map(commitLine), ...(ch.note ? { note: ch.note } : {}) };
  for (const n of v.notes) details[n.label] = n.value;
  details.alert_id = detail.id;
  if (detail.incident_id) details.incident_id = detail.incident_id;
  if (detail.deployment?.execution_id) details.execution_id = detail.deployment.execution_id;
  if (detail.amends) details.amends = detail.amends;
  if (held !== undefined) details.held_in_digest = held;
  if (digestId !== undefined) details.digest_id = digestId;
  const { value } = clipStrings(redact(details), { maxBytes: CUSTOM_DETAILS_MAX_BYTES, maxFieldBytes: 4096 });
  return value;
}

/**
 * The event for one alert: a close resolves its incident's PagerDuty alert; anything else triggers it
 * (a follow-up or an amendment folds into the open alert, PagerDuty adding it to the alert's log).
 */
export function renderPagerDutyEvent(detail: LookoutEventDetail, opts: PagerDutyRenderOptions = {}): PagerDutyEvent {
  const dedup_key = dedupKeyOf(detail);
  if (isClosing(detail.transition)) return { event_action: "resolve", dedup_key };
  const severity = opts.presentation?.severity ?? detail.severity;
  const v = alertView({ ...detail, severity });
  const payload: PagerDutyPayload = {
    summary: clip(oneLine(v.summary), PAGERDUTY_SUMMARY_MAX),
    source: short(opts.source) ?? short(v.where) ?? "lookout",
    severity,
    custom_details: customDetails(detail, severity, opts.held, opts.digestId),
  };
  if (v.occurredAt) payload.timestamp = v.occurredAt.toISOString();
  const component = short(v.subject);
  if (component) payload.component = component;
  const group = short(v.place);
  if (group) payload.group = group;
  payload.class = v.detailType;
  const event: PagerDutyEvent = { event_action: "trigger", dedup_key, payload, client: "Lookout" };
  const links = linksOf(detail, opts.presentation, v.links);
  if (links.length) event.links = links;
  return event;
}

/**
 * A storm's digest for PagerDuty, which groups by itself: per alert key, the latest trigger held (with
 * how many were held) and then, when a close of it was held too, its resolve. At most two events per
 * incident, in the order the keys were first held.
 */
export function renderPagerDutyDigest(
  held: readonly LookoutEventDetail[],
  opts: { presentationOf?: (d: LookoutEventDetail) => Presentation; source?: string; digestId?: string } = {},
): PagerDutyEvent[] {
  const byKey = new Map<string, LookoutEventDetail[]>();
  for (const d of held) {
    const key = dedupKeyOf(d);
    const list = byKey.get(key);
    if (list) list.push(d);
    else byKey.set(key, [d]);
  }
  const out: PagerDutyEvent[] = [];
  for (const list of byKey.values()) {
    const triggers = list.filter((d) => !isClosing(d.transition));
    const last = triggers[triggers.length - 1];
    if (last) {
      const presentation = opts.presentationOf?.(last);
      out.push(renderPagerDutyEvent(last, { ...(presentation ? { presentation } : {}), ...(opts.source ? { source: opts.source } : {}), held: triggers.length, ...(opts.digestId ? { digestId: opts.digestId } : {}) }));
    }
    // A close ends the incident whatever was held after it (its amendment may arrive later).
    const close = list.find((d) => isClosing(d.transition));
    if (close) out.push(renderPagerDutyEvent(close));
  }
  return out;
}
