/**
 * Names the platform lists (lib/poll/platform-names.ts caches them) on an event that lacks them: the project's
 * name, and the member's name for `deployment.triggered_by` when it is a member's id or e-mail. Pure.
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { OrganizationNames } from "../model/ingest-store.js";

export function withPlatformNames(d: LookoutEventDetail, names: OrganizationNames | undefined): LookoutEventDetail {
  if (!names) return d;
  let out = d;
  if (d.project?.id && !d.project.name) {
    const name = names.projects.find((p) => p.id === d.project!.id)?.name;
    if (name) out = { ...out, project: { ...d.project, name } };
  }
  const by = d.deployment?.triggered_by;
  if (by && !d.deployment!.triggered_by_name) {
    const lower = by.toLowerCase();
    const name = names.members.find((m) => m.id === by || m.email?.toLowerCase() === lower)?.name;
    if (name && name !== by) out = { ...out, deployment: { ...d.deployment!, triggered_by_name: name } };
  }
  return out;
}
