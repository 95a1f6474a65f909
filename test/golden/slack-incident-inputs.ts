/**
 * Inputs of the incident rendering tests (docs/events.md, "Incidents"): a webhook target's and a
 * cluster's incident from failure to recovery, a repeat, a deployment's "What changed", and the
 * route presentations (severity, mentions, links) they are shown with.
 */
import type { CommitFacts, IncidentFacts, LookoutEventDetail } from "../../lib/model/event.js";
import type { Presentation } from "../../lib/notify/types.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";
import { FIRST, STILL } from "./inputs.js";

const HOOK = EXAMPLE_DETAILS["Webhook Delivery Failed"];
const CLUSTER = EXAMPLE_DETAILS["Cluster Error"];

/** `base` as alert `id` of the incident `subject` opened by alert `opener` at `opened_at`. */
const inIncident = (base: LookoutEventDetail, id: string, opener: string, incident: Omit<IncidentFacts, "opened_at">, over: Partial<LookoutEventDetail> = {}): LookoutEventDetail =>
  ({ ...base, id, incident_id: opener, incident: { opened_at: base.occurred_at, ...incident }, ...over });

const HOOK_SUBJECT = "webhook:wh-1:hooks.acme.io";

/** The opening failure of a webhook target's incident. */
export const HOOK_OPEN = inIncident(HOOK, "hook-open", "hook-open", { subject: HOOK_SUBJECT, failures: 1 });

/** The same error again, the third failure of the incident. */
export const HOOK_REPEAT = inIncident(HOOK, "hook-repeat", "hook-open", { subject: HOOK_SUBJECT, failures: 3, repeat: true }, { occurred_at: "2026-03-02T14:12:05Z" });

export const HOOK_RECOVERED = inIncident(HOOK, "hook-recovered", "hook-open", { subject: HOOK_SUBJECT, failures: 5, duration_sec: 14 * 60 + 3, resolved_by: "HTTP 200" }, {
  transition: "target_recovered",
  severity: "warning", // its incident's
  status: "200",
  http: { ...HOOK.http!, status_code: 200, response_excerpt: "ok" },
  summary: "Webhook target hooks.acme.io recovered — HTTP 200 after 5 failures in 14m",
  occurred_at: "2026-03-02T14:22:40Z",
});

export const CLUSTER_OPEN = inIncident(CLUSTER, "cluster-open", "cluster-open", { subject: "cluster:prod-eu", failures: 1 });

export const CLUSTER_RECOVERED = inIncident(CLUSTER, "cluster-recovered", "cluster-open", { subject: "cluster:prod-eu", failures: 2, duration_sec: 3600 + 25 * 60, resolved_by: "quiet for 30m" }, {
  transition: "cluster_recovered",
  severity: "error", // its incident's
  status: "Info",
  error: undefined,
  summary: "Cluster prod-eu recovered — quiet for 30m",
  occurred_at: "2026-03-02T15:01:00Z",
});

const commit = (i: number, over: Partial<CommitFacts> = {}): CommitFacts => ({
  id: `${String(i).padStart(2, "0")}c0ffee${"0".repeat(32)}`,
  short_id: `${String(i).padStart(2, "0")}c0ffe`,
  message: `Change number ${i}\n\nWith a body.`,
  author: i % 2 ? "Dana Ruiz" : "Lee Park",
  link: `https://github.com/acme/storefront/commit/${String(i).padStart(2, "0")}c0ffee`,
  ...over,
});

/** An amendment of the first failure: the commits since the last successful deployment, 5 of 12. */
export const CHANGES: LookoutEventDetail = {
  ...FIRST,
  id: "changes-1",
  transition: "changes_listed",
  summary: "api (storefront/production): 12 commits since the last successful deployment",
  amends: FIRST.id,
  incident_id: FIRST.id,
  deployment: {
    ...FIRST.deployment!,
    changes: { since_commit: "0ldc0mm1t", until_commit: FIRST.deployment!.commit!.id!, commits: [1, 2, 3, 4, 5].map((i) => commit(i)), total: 12 },
  },
};

/** So many commits that only a handful may show. */
export function manyChanges(n: number, text = "x"): LookoutEventDetail {
  const commits = Array.from({ length: n }, (_, i) => commit(i, { message: `${text}\n${text}`, author: text, short_id: text.slice(0, 40) }));
  return { ...CHANGES, deployment: { ...CHANGES.deployment!, changes: { commits, total: n, more: true, note: text } } };
}

/** A production route's presentation: critical, @here and a user group, console/logs/runbook links. */
export const CRITICAL_PRESENTATION: Presentation = {
  severity: "critical",
  mentions: ["<!here>", "<!subteam^S0123ABC>"],
  links: [
    { label: "Console", url: "https://console.example-platform.com/organization/acme/project/storefront/application/api" },
    { label: "Execution logs", url: `https://console.example-platform.com/logs/${FIRST.deployment!.execution_id}` },
    { label: "Runbook", url: "https://wiki.acme.io/runbooks/api" },
  ],
};

export { FIRST, STILL };

/** Examples of the incident transitions, until test/fixtures/event-examples.ts has its own. */
export const INCIDENT_EXAMPLES: Record<string, LookoutEventDetail> = {
  "Deployment Changes Listed": CHANGES,
  "Webhook Target Recovered": HOOK_RECOVERED,
  "Cluster Recovered": CLUSTER_RECOVERED,
};

/** The example of a detail-type: the fixtures' own, else ours. */
export const exampleOf = (type: string): LookoutEventDetail =>
  (EXAMPLE_DETAILS as Record<string, LookoutEventDetail | undefined>)[type] ?? INCIDENT_EXAMPLES[type]!;
