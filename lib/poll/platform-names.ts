/**
 * Project and member names from the platform (endpoints 14 and 15), cached per organization in the
 * table: read again when stale and only when the request budget has room, each request counted in the
 * poll's cost like its own reads. A failed read keeps the names known and tries again sooner.
 */
import type { OrganizationNames } from "../model/ingest-store.js";
import type { PlatformError } from "../platform/errors.js";
import { redactText } from "../platform/redact.js";
import { type PollContext, hasSpare } from "./readers/reader.js";

const HOUR = 3_600_000;
/** Names change rarely: read again after this. */
export const NAMES_FRESH_MS = 6 * HOUR;
/** After a failed read: try again after this. */
export const NAMES_RETRY_MS = HOUR;
/** Entries kept per list, and characters per name: the cache is one item, under DynamoDB's 400 KB. */
export const NAMES_KEPT = 500;
const NAME_CHARS = 100;

/** A name as stored: platform text, redacted and bounded; undefined when empty. */
function nameText(v: unknown): string | undefined {
  if (typeof v !== "string" || !v.trim()) return undefined;
  return redactText(v.trim()).slice(0, NAME_CHARS);
}

/** The organization's names: from the cache, read again first when stale and the budget has room. */
export async function organizationNames(poll: PollContext, organizationId: string): Promise<OrganizationNames | undefined> {
  const { deps } = poll;
  const cached = await deps.store.getOrganizationNames(organizationId);
  const nowMs = deps.now().getTime();
  if (cached && Date.parse(cached.refresh_after) > nowMs) return cached;
  if (!(await hasSpare(poll, 2))) return cached;

  const read = async <T>(what: string, call: () => Promise<{ items: T[]; cost: Parameters<PollContext["spend"]>[0] }>) => {
    try {
      const res = await call();
      poll.spend(res.cost);
      return res.items;
    } catch (err) {
      const e = err as PlatformError;
      if (e.cost) poll.spend(e.cost);
      deps.log.warn(`could not read the organization's ${what}; the names known are kept`, { organizationId, error: e.message, kind: e.kind });
      return undefined;
    }
  };
  const path = { organizationId };
  const projects = await read("projects", () => deps.client.list("listProjects", { path }));
  const members = await read("members", () => deps.client.list("listOrganizationMembers", { path }));
  const names: OrganizationNames = {
    organization_id: organizationId,
    projects: projects
      ? projects.flatMap((p) => {
          const name = nameText(p.name);
          return name ? [{ id: p.id, name }] : [];
        }).slice(0, NAMES_KEPT)
      : (cached?.projects ?? []),
    members: members
      ? members.map((m) => {
          const name = nameText(m.name) ?? nameText(m.nickname);
          const email = nameText(m.email);
          return { id: m.id, ...(name ? { name } : {}), ...(email ? { email } : {}) };
        }).slice(0, NAMES_KEPT)
      : (cached?.members ?? []),
    ...(projects && members ? { refreshed_at: deps.now().toISOString() } : cached?.refreshed_at ? { refreshed_at: cached.refreshed_at } : {}),
    refresh_after: new Date(nowMs + (projects && members ? NAMES_FRESH_MS : NAMES_RETRY_MS)).toISOString(),
  };
  await deps.store.saveOrganizationNames(names);
  return names;
}
