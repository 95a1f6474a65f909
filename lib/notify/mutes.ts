/**
 * Mutes: scoped to an organization, project, environment or service, with an end, a reason and who set
 * it. Pure. A muted alert is still recorded (as suppressed, naming the mute), so nothing is lost.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { checkField } from "../routes/match.js";
import type { Mute, MuteScope } from "../model/notify-store.js";

/** A mute scope matches exactly as a route's match on the same fields would (lib/routes/match.ts). */
export function scopeMatches(scope: MuteScope, detail: LookoutEventDetail): boolean {
  return (["organization", "project", "environment", "service"] as const).every((field) => {
    const value = scope[field];
    return !value || checkField(detail, field, [UUID_SHAPE.test(value) ? value.toLowerCase() : value]).matched;
  });
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isActive = (m: Mute, now: Date) =>
  !m.lifted_at && Date.parse(m.created_at) <= now.getTime() && Date.parse(m.until) > now.getTime();

/** The mute that silences this alert now, if any. Health events about Lookout itself are never muted. */
export function activeMute(detail: LookoutEventDetail, mutes: readonly Mute[], now: Date): Mute | undefined {
  if (detail.kind === "health") return undefined;
  return mutes.find((m) => isActive(m, now) && scopeMatches(m.scope, detail));
}

export function describeScope(scope: MuteScope): string {
  const parts = Object.entries(scope).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(" ") : "everything";
}
