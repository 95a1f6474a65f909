/**
 * The generic webhook's body and signature (docs/receivers.md, "Generic webhook"). Pure.
 *
 * BODY. Lookout's event detail as docs/events.md defines it (events.schema.json), wrapped with what the
 * delivery adds: the detail-type, the severity and links as the route presents them, and the event's
 * place in its incident at this receiver (`incident.role`; `root_alert_id` names the message this one
 * follows there). A storm's digest is one body listing the held events. At most 256 KB: text fields of
 * an alert are clipped as the bus clips them, a digest lists what fits and counts the rest.
 *
 * SIGNATURE. Like Slack's v0 scheme: `X-Lookout-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`
 * keyed by the signing secret, `X-Lookout-Timestamp` Unix seconds. A receiver recomputes it over the raw
 * body, compares in constant time and refuses a timestamp more than five minutes off.
 */
import { hmacHex, sameSignature } from "../../model/hash.js";
import { EVENT_SOURCE, isClosing, type LookoutEventDetail } from "../../model/event.js";
import { clipStrings } from "../../model/bounds.js";
import type { DigestWindow, IncidentRef, Presentation } from "../types.js";
import { detailTypeOfDetail } from "../view/index.js";

export const WEBHOOK_BODY_MAX_BYTES = 256 * 1024;
export const SIGNATURE_HEADER = "X-Lookout-Signature";
export const TIMESTAMP_HEADER = "X-Lookout-Timestamp";
/** The alert's (or digest's) id: the same on every retry, for the receiver to deduplicate on. */
export const DELIVERY_HEADER = "X-Lookout-Delivery";
/** How far a signed timestamp may be from the receiver's clock. */
export const SIGNATURE_TOLERANCE_SEC = 300;

export type IncidentRole = "opening" | "follow_up" | "repeat" | "amendment" | "close";

export interface WebhookIncident {
  id: string;
  role: IncidentRole;
  /** The alert whose message this one follows at this receiver; absent: this one stands for the incident here. */
  root_alert_id?: string;
}

export interface WebhookAlertBody {
  type: "lookout.alert";
  id: string;
  "detail-type": string;
  source: typeof EVENT_SOURCE;
  time: string;
  severity: string;
  links: Array<{ label: string; url: string }>;
  incident?: WebhookIncident;
  detail: LookoutEventDetail;
}

export interface WebhookDigestBody {
  type: "lookout.digest";
  id: string;
  source: typeof EVENT_SOURCE;
  time: string;
  from: string;
  to: string;
  held: Array<{ id: string; "detail-type": string; severity: string; held_at?: string; detail: LookoutEventDetail }>;
  /** Held events left out to stay within the size limit, by id. */
  omitted?: string[];
  /** How many were left out, when any were (the first OMITTED_LISTED of them are named in `omitted`). */
  omitted_count?: number;
}

/** The event's place in its incident at this receiver. */
export function incidentRole(detail: LookoutEventDetail): IncidentRole | undefined {
  if (!detail.incident_id) return undefined;
  if (isClosing(detail.transition)) return "close";
  if (detail.amends) return "amendment";
  if (detail.incident_id === detail.id) return "opening";
  return detail.incident?.repeat ? "repeat" : "follow_up";
}

const bounded = (detail: LookoutEventDetail, maxBytes: number): LookoutEventDetail =>
  clipStrings(detail, { maxBytes, rank: (p) => (p.length === 1 && ["version", "id", "kind", "transition", "severity"].includes(String(p[0])) ? "never" : p[p.length - 1] === "id" || String(p[p.length - 1]).endsWith("_id") ? 2 : 1) }).value;

export function renderWebhookAlert(detail: LookoutEventDetail, incident?: IncidentRef, presentation?: Presentation): string {
  const role = incidentRole(detail);
  const root = incident?.shown !== false ? (incident?.root ?? incident?.first) : undefined;
  const body: WebhookAlertBody = {
    type: "lookout.alert",
    id: detail.id,
    "detail-type": detailTypeOfDetail(detail),
    source: EVENT_SOURCE,
    time: detail.observed_at,
    severity: presentation?.severity ?? detail.severity,
    links: (presentation?.links ?? []).map((l) => ({ label: l.label, url: l.url })),
    ...(role ? { incident: { id: detail.incident_id!, role, ...(root && root.id !== detail.id ? { root_alert_id: root.id } : {}) } } : {}),
    detail,
  };
  const text = JSON.stringify(body);
  if (Buffer.byteLength(text) <= WEBHOOK_BODY_MAX_BYTES) return text;
  const overhead = Buffer.byteLength(text) - Buffer.byteLength(JSON.stringify(detail));
  return JSON.stringify({ ...body, detail: bounded(detail, WEBHOOK_BODY_MAX_BYTES - overhead - 1024) });
}

export function renderWebhookDigest(held: readonly LookoutEventDetail[], window: DigestWindow, presentationOf?: (d: LookoutEventDetail) => Presentation): string {
  const body: WebhookDigestBody = { type: "lookout.digest", id: window.id, source: EVENT_SOURCE, time: window.at ?? window.to, from: window.from, to: window.to, held: [] };
  // Room for the ids of what is left out (the first OMITTED_LISTED of them) and their count.
  let size = Buffer.byteLength(JSON.stringify(body)) + 64 * Math.min(held.length, OMITTED_LISTED) + 32;
  const omitted: string[] = [];
  for (const d of held) {
    const entry = { id: d.id, "detail-type": detailTypeOfDetail(d), severity: presentationOf?.(d).severity ?? d.severity, ...(window.heldAt?.[d.id] ? { held_at: window.heldAt[d.id] } : {}), detail: d };
    const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (size + bytes > WEBHOOK_BODY_MAX_BYTES) {
      omitted.push(d.id);
      continue;
    }
    size += bytes;
    body.held.push(entry);
  }
  if (omitted.length) {
    body.omitted = omitted.slice(0, OMITTED_LISTED);
    body.omitted_count = omitted.length;
  }
  return JSON.stringify(body);
}

/** The ids a digest names of what it left out: a storm of 10,000 still fits its body. */
export const OMITTED_LISTED = 100;

/** `v1=<hex>`: HMAC-SHA256 of `<timestamp>.<body>` with the signing secret. */
export function webhookSignature(secret: string, timestamp: string | number, body: string): string {
  return `v1=${hmacHex(secret, `${timestamp}.${body}`)}`;
}

/** What a receiver of Lookout's webhook checks (the test receiver does, as a user's would). */
export function verifyWebhookSignature(secret: string, headers: { signature?: string; timestamp?: string }, body: string, nowMs: number): { ok: true } | { ok: false; reason: string } {
  const { signature, timestamp } = headers;
  if (!signature || !timestamp) return { ok: false, reason: "unsigned" };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "malformed timestamp" };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SEC) return { ok: false, reason: "stale" };
  return sameSignature(webhookSignature(secret, timestamp, body), signature) ? { ok: true } : { ok: false, reason: "bad signature" };
}

/** The headers of one attempt: signed at the moment it is sent, so a retry is not stale. */
export function signedHeaders(secret: string, deliveryId: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: webhookSignature(secret, timestamp, body), [DELIVERY_HEADER]: deliveryId };
}
