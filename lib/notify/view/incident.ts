/**
 * An incident as people read it, whatever the medium (docs/events.md, "Incidents"): its name without
 * its state (what every message of it is titled by), the state of one message in it, its facts, and
 * what changed before a deployment failure. Pure; plain text, escaped by each renderer.
 */
import { isClosing, type LookoutEventDetail } from "../../model/event.js";
import { formatLasted } from "../../model/time.js";
import { formatElapsed, formatUtc, nameOf, oneLine, parseInstant } from "./format.js";
import type { AlertView, ChangesView, CommitView, Fact } from "./types.js";

/**
 * Whether a detail is a message of an incident: every failure and close of a deployment, webhook target
 * or cluster; a cancellation only while its service was failing; never Lookout's own health.
 */
export function inIncident(detail: LookoutEventDetail): boolean {
  if (detail.kind === "health") return false;
  return detail.transition !== "cancelled" || Boolean(detail.incident_id);
}

/**
 * What the incident is about, from its first alert and without any state, so that every message of it
 * can carry the same title: "api in storefront/production — deployment", "webhook to hooks.acme.io",
 * "cluster eu-prod". Undefined for what is no incident.
 */
export function incidentName(first: LookoutEventDetail): string | undefined {
  if (!inIncident(first)) return undefined;
  switch (first.kind) {
    case "webhook_delivery": {
      const webhook = first.webhook?.name;
      const host = first.http?.target_host;
      if (!host) return `webhook ${nameOf(first.webhook) ?? "target"}`;
      return oneLine(`webhook ${webhook ? `${webhook} ` : ""}to ${host}`);
    }
    case "cluster_log":
      return oneLine(`cluster ${nameOf(first.cluster) ?? "unknown"}`);
    default: {
      const project = nameOf(first.project);
      const environment = nameOf(first.environment);
      const place = [project, environment].filter(Boolean).join("/");
      return oneLine(`${nameOf(first.service) ?? "service"}${place ? ` in ${place}` : ""} — deployment`);
    }
  }
}

/** "resolved after 14m" on a close that says how long it lasted (else "resolved"); undefined otherwise. */
export function resolvedPhrase(detail: LookoutEventDetail): string | undefined {
  if (!isClosing(detail.transition)) return undefined;
  const sec = detail.incident?.duration_sec;
  return sec !== undefined && Number.isFinite(sec) ? `resolved after ${formatLasted(sec)}` : "resolved";
}

/**
 * The state one message of an incident reports, for its first line and a header: the transition's
 * word, and on a close how long it lasted ("RECOVERED, resolved after 14m").
 */
export function incidentState(detail: LookoutEventDetail, transitionWord: string): string {
  const sec = detail.incident?.duration_sec;
  return isClosing(detail.transition) && sec !== undefined ? `${transitionWord}, ${resolvedPhrase(detail)}` : transitionWord;
}

/** The incident's facts as rows: failures so far, when it opened, how long it lasted, what ended it. */
export function incidentFacts(detail: LookoutEventDetail): Fact[] {
  const i = detail.incident;
  if (!i) return [];
  const facts: Fact[] = [];
  const opened = parseInstant(i.opened_at);
  // One failure goes without saying; deployments already show their count ("Failures in a row").
  if (i.failures !== undefined && i.failures > 1 && i.failures !== detail.deployment?.failure_count) {
    facts.push({ label: isClosing(detail.transition) ? "Failures in incident" : "Failures so far", value: String(i.failures) });
  }
  if (i.repeat) facts.push({ label: "Repeat", value: "same error as the failure before" });
  facts.push({ label: "Opened", value: opened ? formatUtc(opened) : oneLine(i.opened_at) });
  if (i.duration_sec !== undefined && Number.isFinite(i.duration_sec)) {
    facts.push({ label: "Lasted", value: formatElapsed(i.duration_sec, undefined) ?? formatLasted(i.duration_sec) });
  }
  if (i.resolved_by) facts.push({ label: "Resolved by", value: oneLine(i.resolved_by) });
  return facts;
}

/** What changed before a deployment failure, as shown: at most five commits and how many more. */
/** "+95 more", "+95 or more": the commits a change list leaves out; undefined when none. */
export function moreCommits(ch: ChangesView): string | undefined {
  if (ch.more <= 0 && !ch.atLeast) return undefined;
  return ch.atLeast ? `+${ch.more} or more` : `+${ch.more} more`;
}

/** "3 commits since 1b2c3d4e5f60 until a94a8fe5ccb1" (the range when known). */
export function changesHeading(ch: ChangesView): string {
  const n = `${ch.total}${ch.atLeast ? "+" : ""} commit${ch.total === 1 && !ch.atLeast ? "" : "s"}`;
  return `${n}${ch.since ? ` since ${ch.since}` : ""}${ch.until ? ` up to ${ch.until}` : ""}`;
}

/** One commit of a change list as a line: "a94a8fe Bump payment SDK to 4.2 — Dana Ruiz". */
export function commitLine(c: CommitView): string {
  return `${c.shortId ?? "(no id)"}${c.tag ? ` (${c.tag})` : ""}${c.subject ? ` ${c.subject}` : ""}${c.author ? ` — ${c.author}` : ""}`;
}

/** A close's line, whatever the medium: "✅ Resolved after 14m · by DEPLOYED, commit a94a8fe · 5 failures". */
export function resolutionLine(v: AlertView): string {
  const i = v.incident;
  const parts = [`✅ Resolved${i?.lasted ? ` after ${i.lasted}` : ""}`];
  if (i?.resolvedBy) parts.push(`by ${i.resolvedBy}`);
  if (i?.failures) parts.push(`${i.failures} failure${i.failures === 1 ? "" : "s"}`);
  return parts.join(" · ");
}
