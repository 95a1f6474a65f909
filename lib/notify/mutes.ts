/**
 * Mutes: scoped to an organization, project, environment or service, with an end, a reason and who set
 * it. Pure. A muted alert is still recorded (as suppressed, naming the mute), so nothing is lost.
 */
import { isClosing, type LookoutEventDetail } from "../model/event.js";
import { checkField } from "../routes/match.js";
import type { Mute, MuteScope } from "../model/notify-store.js";

/** A mute scope matches exactly as a route's match on the same fields would (lib/routes/match.ts). */
export function scopeMatches(scope: MuteScope, detail: LookoutEventDetail): boolean {
  const byRef = (["organization", "project", "environment", "service"] as const).every((field) => {
    const value = scope[field];
    return !value || checkField(detail, field, [UUID_SHAPE.test(value) ? value.toLowerCase() : value]).matched;
  });
  // A cluster or a webhook is muted by its id only (set from its incident's message).
  return byRef && (["cluster", "webhook"] as const).every((field) => !scope[field] || detail[field]?.id === scope[field]);
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isActive = (m: Mute, now: Date) =>
  !m.lifted_at && Date.parse(m.created_at) <= now.getTime() && Date.parse(m.until) > now.getTime();

/**
 * The mute that silences this alert now, if any. Health events about Lookout itself are never muted,
 * nor the close of the incident a mute was set until: people see it resolved.
 */
export function activeMute(detail: LookoutEventDetail, mutes: readonly Mute[], now: Date): Mute | undefined {
  if (detail.kind === "health") return undefined;
  return mutes.find((m) => isActive(m, now) && scopeMatches(m.scope, detail) && !closesItsIncident(m, detail));
}

/** The close of the incident a mute was set until: it lifts the mute (lib/notify/delivery/mute.ts). */
export const closesItsIncident = (m: Mute, detail: LookoutEventDetail): boolean =>
  !!m.until_resolved && isClosing(detail.transition) && detail.incident_id === m.until_resolved;

export function describeScope(scope: MuteScope): string {
  const parts = Object.entries(scope).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(" ") : "everything";
}
