/** The view of a failed webhook delivery: about its target host; what = the HTTP status. */
import type { KindView } from "./types.js";
import { nameOf } from "./format.js";

export const webhookView: KindView = {
  // The incident is the target's: the service is only whose event was being delivered (each delivery may be another's).
  serviceLabel: "Event about",
  subject: (detail) => detail.http?.target_host ?? nameOf(detail.webhook) ?? nameOf(detail.service) ?? "webhook",
  what: (detail) =>
    detail.http?.status_code != null ? `HTTP ${detail.http.status_code}` : (detail.status ?? "no response"),
  fields(detail, add) {
    add("HTTP status", detail.http ? (detail.http.status_code ?? "no response") : detail.status);
    add("Target host", detail.http?.target_host);
    add("Webhook", nameOf(detail.webhook));
    add("Event", detail.http?.matched_event);
    add("Webhook kind", detail.http?.delivery_kind);
  },
};
