/**
 * Receiver identity and labels. The id keys idempotent delivery (event id × receiver) and merges a
 * receiver named by several routes, so it must be stable across restarts and config reorderings; it is
 * a hash, so logs and the audit trail can carry it without showing even the secret's reference.
 */
import { createHash } from "node:crypto";
import { escalationReceivers, type NotifySettings, type Receiver, type Route, receiversOf, routeReceivers } from "./route-types.js";

/** The fields that make a receiver what it is, in a fixed order. */
function identity(r: Receiver): string[] {
  if (r.type === "email") return ["email", ...[...new Set(r.to.map((a) => a.toLowerCase()))].sort()];
  if (r.type === "pagerduty") return ["pagerduty", r.routingKeyRef, r.source ?? ""];
  if (r.type === "webhook") return ["webhook", r.urlRef, r.signingSecretRef];
  if (r.type === "teams") return ["teams", r.urlRef];
  return r.form === "webhook" ? ["slack", "webhook", r.webhookUrlRef] : ["slack", "api", r.channel, r.tokenRef];
}

/** `slack-1f3a9c0d2b`, `email-7e21c4aa90`: short, stable, and says nothing about the secret. */
export function receiverId(r: Receiver): string {
  const hash = createHash("sha256").update(JSON.stringify(identity(r))).digest("hex").slice(0, 10);
  return `${r.type}-${hash}`;
}

/**
 * For people: `slack #oncall`, `slack webhook env:SLACK_WEBHOOK_ONCALL`, `email oncall@example.com`,
 * `pagerduty env:PD_ROUTING_KEY`: a secret's reference, never the secret.
 */
export function receiverLabel(r: Receiver): string {
  if (r.type === "email") return `email ${r.to.join(", ")}`;
  if (r.type === "pagerduty") return `pagerduty ${r.routingKeyRef}`;
  if (r.type === "webhook" || r.type === "teams") return `${r.type} ${r.urlRef}`;
  return r.form === "webhook" ? `slack webhook ${r.webhookUrlRef}` : `slack ${r.channel}`;
}

/** The receivers once each, by id, first mention first: two routes naming #oncall post there once. */
export function distinctReceivers(receivers: Iterable<Receiver>): Receiver[] {
  const seen = new Map<string, Receiver>();
  for (const r of receivers) {
    const id = receiverId(r);
    if (!seen.has(id)) seen.set(id, r);
  }
  return [...seen.values()];
}

/** Every receiver the configuration names, once each (routes, the default route, then the fallbacks). */
export function allReceivers(routes: readonly Route[], notify: NotifySettings): Receiver[] {
  return distinctReceivers([
    ...routes.flatMap(routeReceivers), ...routes.flatMap(escalationReceivers), ...receiversOf(notify.default), ...receiversOf(notify.fallback),
  ]);
}
