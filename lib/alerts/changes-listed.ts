/**
 * "What changed": the `changes_listed` amendment of a deployment failure (docs/events.md). It updates
 * the failure's messages with the commits since the service's last successful deployment; the range is
 * computed by lib/poll/commit-range.ts, this builds the detail. Pure.
 */
import type { ChangeFacts, CommitFacts, LookoutEventDetail } from "../model/event.js";
import { EVENT_VERSION } from "../model/event.js";
import type { CommitRecord } from "../model/observations.js";
import { contentHash } from "../model/hash.js";
import { compact } from "../model/compact.js";

/** The commits between two deployments, as computed (lib/poll/commit-range.ts). */
export interface ListedChanges {
  since?: string;
  until?: string;
  /** Newest first, the few shown. */
  commits: CommitRecord[];
  total: number;
  more: boolean;
  note?: string;
}

/** One amendment per failure alert, however often the failure is read. */
export const changesAlertId = (failureAlertId: string) => contentHash("changes_listed", failureAlertId);

/** The first 7 characters of a hexadecimal commit id; any other id as it is. */
export const shortSha = (id: string | undefined) => (id && /^[0-9a-f]{8,}$/i.test(id) ? id.slice(0, 7) : id);

export const commitFacts = (c: CommitRecord): CommitFacts =>
  compact({ id: c.id, short_id: shortSha(c.id), message: c.message, author: c.author, link: c.link, tag: c.tag });

/** The amendment of `failure` (the stored failure alert's detail): its refs, severity and incident, and the changes. */
export function changesDetail(failure: LookoutEventDetail, listed: ListedChanges, observedAt: string): LookoutEventDetail {
  const changes: ChangeFacts = compact({
    since_commit: listed.since,
    until_commit: listed.until,
    commits: listed.commits.map(commitFacts),
    total: listed.total,
    more: listed.more || undefined,
    note: listed.note,
  });
  return compact({
    version: EVENT_VERSION,
    id: changesAlertId(failure.id),
    kind: "deployment" as const,
    transition: "changes_listed" as const,
    severity: failure.severity,
    organization: failure.organization,
    project: failure.project,
    environment: failure.environment,
    service: failure.service,
    status: failure.status,
    occurred_at: failure.occurred_at,
    observed_at: observedAt,
    summary: changesSummary(failure, changes),
    record: failure.record,
    deployment: compact({ execution_id: failure.deployment?.execution_id ?? failure.record?.id ?? failure.id, commit: failure.deployment?.commit, changes }),
    incident_id: failure.incident_id,
    amends: failure.id,
  });
}

function changesSummary(failure: LookoutEventDetail, c: ChangeFacts): string {
  const who = failure.service?.name ?? failure.service?.id ?? "the service";
  if (!c.commits.length) return `${who}: what changed since the last successful deployment is not listed${c.note ? ` — ${c.note}` : ""}`;
  const count = `${c.total}${c.more ? "+" : ""} commit${c.total === 1 && !c.more ? "" : "s"}`;
  const newest = c.commits[0]!;
  const line = newest.message?.split("\n")[0]!.trim();
  return `${who}: ${count} since the last successful deployment${c.since_commit ? ` (${shortSha(c.since_commit)})` : ""}, newest ${newest.short_id ?? "?"}${line ? `: ${line.slice(0, 80)}` : ""}`;
}
