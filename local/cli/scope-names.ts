/**
 * Names where ids are taken (`--environment production`): resolved against the configuration's watch
 * names and the names the stored records carry. One resolver for audit (which needs an id: an
 * ambiguous or unknown name is a usage error) and mute (which matches by name: it only notes).
 */
import type { Config } from "../../lib/config/load.js";
import type { AuditRow } from "../../lib/model/audit-row.js";
import type { AuditReader } from "../../lib/audit/trail.js";
import { parseAuditQuery } from "../../lib/audit/parse.js";
import { MAX_LIMIT } from "../../lib/audit/model.js";
import { UsageError } from "./shared.js";

export const NAMED_SCOPES = ["organization", "project", "environment", "service", "cluster"] as const;
export type NamedScope = (typeof NAMED_SCOPES)[number];

export interface Named {
  id: string;
  name: string;
}

export type KnownNames = Record<NamedScope, Named[]>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string) => UUID.test(v);

/** Every (id, name) pair the configuration and these rows know, once each. */
export function knownNames(config: Pick<Config, "watch"> | undefined, rows: readonly AuditRow[]): KnownNames {
  const known: KnownNames = { organization: [], project: [], environment: [], service: [], cluster: [] };
  const add = (scope: NamedScope, id: string, name: string | undefined) => {
    if (name && !known[scope].some((n) => n.id === id.toLowerCase() && n.name === name)) known[scope].push({ id: id.toLowerCase(), name });
  };
  for (const w of config?.watch ?? []) {
    add("organization", w.organization, w.name);
    for (const a of w.applications) add("service", a.id, a.name);
    for (const c of w.clusters) add("cluster", c.id, c.name);
  }
  for (const r of rows) for (const scope of ["project", "environment", "service", "cluster"] as const) if (r[scope]) add(scope, r[scope]!.id, r[scope]!.name);
  return known;
}

export type NameMatch = { ids: string[]; candidates: Named[] };

/** The things named `value` (exactly; else ignoring case), distinct by id. */
export function matchName(scope: NamedScope, value: string, known: KnownNames): NameMatch {
  const exact = known[scope].filter((n) => n.name === value);
  const candidates = exact.length ? exact : known[scope].filter((n) => n.name.toLowerCase() === value.toLowerCase());
  return { ids: [...new Set(candidates.map((c) => c.id))], candidates };
}

/** The id a name stands for, or a UsageError that says why there is none (unknown, or which ones it could be). */
export function resolveName(scope: NamedScope, value: string, known: KnownNames): string {
  if (isUuid(value)) return value.toLowerCase();
  const { ids, candidates } = matchName(scope, value, known);
  if (ids.length === 1) return ids[0]!;
  if (!ids.length) {
    throw new UsageError(`--${scope}: no ${scope} named "${value}" in the configuration or the stored records; give its id (a uuid)`);
  }
  const list = ids.map((id) => `${candidates.find((c) => c.id === id)!.name} (${id})`).join(", ");
  throw new UsageError(`--${scope}: "${value}" names ${ids.length} ${scope}s: ${list}; give the id`);
}

/** Names from the configuration and the newest stored rows (the last MAX_LIMIT within the longest lookback). */
export async function namesFrom(reader: AuditReader, config: Pick<Config, "watch"> | undefined, now: Date): Promise<KnownNames> {
  const page = await reader.query(parseAuditQuery({ since: "3650d", limit: String(MAX_LIMIT) }, now), { deliveries: false });
  return knownNames(config, page.rows);
}
