/**
 * Mutes: scoped to an organization, project, environment or service, with an end, a reason and who set
 * it. Pure. A muted alert is still recorded (as suppressed, naming the mute), so nothing is lost.
 */
import type { LookoutEventDetail, NamedRef } from "../alerts/event.js";
import type { Mute, MuteScope } from "../store/notify-store.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A uuid-shaped value names an id, anything else a name; a service name may use `*` wildcards. */
function refMatches(ref: NamedRef | undefined, value: string, wildcards = false): boolean {
  if (!ref) return false;
  if (UUID.test(value)) return ref.id.toLowerCase() === value.toLowerCase();
  if (!ref.name) return false;
  if (!wildcards || !value.includes("*")) return ref.name === value;
  const pattern = new RegExp(`^${value.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return pattern.test(ref.name);
}

export function scopeMatches(scope: MuteScope, detail: LookoutEventDetail): boolean {
  return (
    (!scope.organization || refMatches(detail.organization, scope.organization)) &&
    (!scope.project || refMatches(detail.project, scope.project)) &&
    (!scope.environment || refMatches(detail.environment, scope.environment)) &&
    (!scope.service || refMatches(detail.service ?? detail.cluster, scope.service, true))
  );
}

export const isActive = (m: Mute, now: Date) =>
  !m.lifted_at && Date.parse(m.created_at) <= now.getTime() && Date.parse(m.until) > now.getTime();

/** The mute that silences this alert now, if any. Health events about Lookout itself are never muted. */
export function activeMute(detail: LookoutEventDetail, mutes: Mute[], now: Date): Mute | undefined {
  if (detail.kind === "health") return undefined;
  return mutes.find((m) => isActive(m, now) && scopeMatches(m.scope, detail));
}

export function describeScope(scope: MuteScope): string {
  const parts = Object.entries(scope).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
  return parts.length ? parts.join(" ") : "everything";
}
