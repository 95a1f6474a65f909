/** What dispatch watches: every configured source once, with the indexes planning needs. */
import type { Config } from "../config/load.js";
import type { Watchlist } from "../model/dispatch.js";
import { type SourceRef, sourceKey } from "../model/source.js";

export function watchlist(config: Pick<Config, "watch" | "platform">): Watchlist {
  const seen = new Map<string, SourceRef>();
  const add = (kind: SourceRef["kind"], organizationId: string, id: string) =>
    seen.set(sourceKey({ kind, organizationId, id }), { kind, organizationId, id });
  for (const w of config.watch) {
    for (const id of w.webhooks) add("webhook", w.organization, id);
    for (const a of w.applications) add("deployment", w.organization, a.id);
    for (const c of w.clusters) add("cluster", w.organization, c.id);
  }
  const sources = [...seen.values()];
  const byApplication = new Map(sources.filter((s) => s.kind === "deployment").map((s) => [s.id, sourceKey(s)]));
  const webhooksPerOrg = new Map<string, number>();
  for (const s of sources) if (s.kind === "webhook") webhooksPerOrg.set(s.organizationId, (webhooksPerOrg.get(s.organizationId) ?? 0) + 1);
  return { sources, keys: new Set(seen.keys()), byApplication, webhooksPerOrg, requestsPerHour: config.platform.requestsPerHour };
}
