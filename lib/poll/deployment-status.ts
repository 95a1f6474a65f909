/**
 * What a deployment status means for alerting. Rule-based so that states the spec does not list yet
 * are still classified (docs/platform.md: "Enums grow"): any `_ERROR` suffix is a failure.
 */
export type StatusClass = "failure" | "success" | "cancelled" | "in_progress";

/** Terminal success states as the platform's own CLI sees them. */
const SUCCESS = new Set(["DEPLOYED", "RESTARTED", "DELETED", "STOPPED"]);
const CANCELLED = new Set(["CANCELED", "CANCELLED"]);

export function classifyStatus(status: string | undefined | null): StatusClass {
  const s = (status ?? "").toUpperCase();
  if (s.endsWith("_ERROR")) return "failure";
  if (SUCCESS.has(s)) return "success";
  if (CANCELLED.has(s)) return "cancelled";
  return "in_progress";
}

export const isTerminal = (status: string | undefined | null): boolean => classifyStatus(status) !== "in_progress";

/** A webhook delivery failed when its target answered outside 2xx, or not at all (0 or absent). */
export function deliveryFailed(statusCode: number | null | undefined): boolean {
  return typeof statusCode !== "number" || statusCode < 200 || statusCode > 299;
}

/** A cluster log entry is a failure when it is an error entry or its step ends in `Error`. */
export function clusterLogFailed(type: string | undefined | null, step: string | undefined | null): boolean {
  return (type ?? "").toLowerCase() === "error" || /error$/i.test(step ?? "");
}

/**
 * A cluster log entry that ends an incident: not a failure, and a step in the past tense (Created,
 * Upgraded, Deleted, Restarted…; docs/platform.md, "Cluster logs").
 */
export function clusterStepSucceeded(type: string | undefined | null, step: string | undefined | null): boolean {
  return !clusterLogFailed(type, step) && /ed$/i.test(step ?? "");
}
