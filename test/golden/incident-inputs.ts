/**
 * Incidents as the renderers see them, message by message: a deployment incident (opening, three
 * follow-ups, the change list, the close), a webhook target's and a cluster's (opening and close),
 * and a route's presentation (severity, links). Shared by the golden and "client's view" tests.
 */
import type { DetailType, LookoutEventDetail } from "../../lib/model/event.js";
import { renderEmail } from "../../lib/notify/email/render.js";
import type { EmailMessage, Presentation } from "../../lib/notify/types.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";

const FAILED = EXAMPLE_DETAILS["Deployment Failed"];
const STILL = EXAMPLE_DETAILS["Deployment Still Failing"];
const RECOVERED = EXAMPLE_DETAILS["Deployment Recovered"];
const HOOK = EXAMPLE_DETAILS["Webhook Delivery Failed"];
const CLUSTER = EXAMPLE_DETAILS["Cluster Error"];

const at = (h: number, m: number, s = 0) => new Date(Date.UTC(2026, 2, 2, h, m, s)).toISOString().replace(".000Z", "Z");
const apiSubject = `deployment:${FAILED.service!.id}`;

/** A production deployment incident: critical, as the environment type makes it. */
export const OPENING: LookoutEventDetail = {
  ...FAILED,
  severity: "critical",
  incident: { subject: apiSubject, opened_at: FAILED.occurred_at, failures: 1 },
};

/** Three more failures; the third repeats the second's error. */
export const FOLLOW_UPS: LookoutEventDetail[] = [0, 1, 2].map((i) => ({
  ...STILL,
  id: `r8LzT3uJw6YdK1fGx0pQs${i}`,
  severity: "critical",
  occurred_at: at(14, 20 + 10 * i),
  summary: `api (storefront/production) deployment still failing — DEPLOYMENT_ERROR — ${i + 2} failures in a row`,
  deployment: { ...STILL.deployment!, failure_count: i + 2 },
  incident: { subject: apiSubject, opened_at: FAILED.occurred_at, failures: i + 2, ...(i === 2 ? { repeat: true } : {}) },
}));

const commit = (n: number, author: string, message: string) => ({
  id: `${n}`.repeat(40).slice(0, 40),
  short_id: `${n}`.repeat(7),
  message,
  author,
  link: `https://github.com/acme/storefront/commit/${`${n}`.repeat(40).slice(0, 40)}`,
});

/** The commits since the last successful deployment: seven, five shown. */
export const CHANGES: LookoutEventDetail = {
  ...FAILED,
  id: "Ch4nG3sL1sT3dXyZ0aB1cD",
  transition: "changes_listed",
  severity: "critical",
  observed_at: "2026-03-02T14:08:05.000Z",
  summary: "api (storefront/production): 7 commits since the last successful deployment",
  amends: FAILED.id,
  deployment: {
    ...FAILED.deployment!,
    changes: {
      since_commit: "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e",
      until_commit: FAILED.deployment!.commit!.id!,
      commits: [
        FAILED.deployment!.commit!,
        commit(2, "Lee Park", "Retry payment calls on 502\n\nWith backoff."),
        commit(3, "Dana Ruiz", "Log the SDK version at start"),
        commit(4, "Sam Okafor", "Bump node to 22"),
        commit(5, "Lee Park", "Move checkout config to env"),
      ],
      total: 7,
    },
  },
  incident: { subject: apiSubject, opened_at: FAILED.occurred_at, failures: 1 },
};

/** The close: what ended it and how long it lasted. */
export const CLOSE: LookoutEventDetail = {
  ...RECOVERED,
  deployment: { ...RECOVERED.deployment!, failure_count: 4 },
  incident: { subject: apiSubject, opened_at: FAILED.occurred_at, failures: 4, duration_sec: 3314, resolved_by: "DEPLOYED by dana@acme.io via GIT" },
};

/** The deployment incident's messages in the order they go out. */
export const DEPLOYMENT_INCIDENT: LookoutEventDetail[] = [OPENING, ...FOLLOW_UPS, CHANGES, CLOSE];

const hookSubject = `webhook:${HOOK.webhook!.id}:hooks.acme.io`;
export const WEBHOOK_OPENING: LookoutEventDetail = {
  ...HOOK,
  incident_id: HOOK.id,
  incident: { subject: hookSubject, opened_at: HOOK.occurred_at, failures: 1 },
};
export const WEBHOOK_CLOSE: LookoutEventDetail = {
  ...HOOK,
  id: "tR9eC0v3r3dW3bH00kAbCd",
  transition: "target_recovered",
  severity: "warning", // its incident's
  status: "200",
  occurred_at: at(14, 21, 33),
  observed_at: "2026-03-02T14:22:01.000Z",
  summary: "Webhook deliveries to hooks.acme.io succeed again — HTTP 200",
  record: { type: "webhook_delivery", id: "5c2f7a1b-04d3-4e68-9b2f-3d7e0a1c8f42" },
  http: { delivery_id: "5c2f7a1b-04d3-4e68-9b2f-3d7e0a1c8f42", status_code: 200, target_host: "hooks.acme.io", matched_event: "DEPLOYMENT_SUCCESS", delivery_kind: "STANDARD" },
  incident_id: HOOK.id,
  incident: { subject: hookSubject, opened_at: HOOK.occurred_at, failures: 6, duration_sec: 840, resolved_by: "HTTP 200" },
};

const clusterSubject = `cluster:${CLUSTER.cluster!.id}`;
export const CLUSTER_OPENING: LookoutEventDetail = {
  ...CLUSTER,
  incident_id: CLUSTER.id,
  incident: { subject: clusterSubject, opened_at: CLUSTER.occurred_at, failures: 1 },
};
export const CLUSTER_CLOSE: LookoutEventDetail = {
  ...CLUSTER,
  id: "cL0st3rR3c0v3r3dQwErTy",
  transition: "cluster_recovered",
  severity: "error", // its incident's
  status: "info",
  occurred_at: at(14, 40, 12),
  observed_at: "2026-03-02T14:41:00.000Z",
  summary: "Cluster eu-prod recovered — Deployed",
  record: { type: "cluster_log_entry", id: "Qw3rTy7uI0pAsDfGhJkL1z", timestamp: at(14, 40, 12), step: "Deployed" },
  error: undefined,
  link: undefined,
  incident_id: CLUSTER.id,
  incident: { subject: clusterSubject, opened_at: CLUSTER.occurred_at, failures: 3, duration_sec: 2702, resolved_by: "step Deployed" },
};

/** One example for each detail-type the fixtures do not show yet. */
export const NEW_TRANSITION_EXAMPLES: Partial<Record<DetailType, LookoutEventDetail>> = {
  "Deployment Changes Listed": CHANGES,
  "Webhook Target Recovered": WEBHOOK_CLOSE,
  "Cluster Recovered": CLUSTER_CLOSE,
};

/** An example detail of any detail-type: the fixtures', else one of these. */
export const exampleOf = (type: DetailType): LookoutEventDetail => EXAMPLE_DETAILS[type] ?? NEW_TRANSITION_EXAMPLES[type]!;

/** A route's presentation of a production failure: critical, with the three configured links. */
export const PRESENTATION: Presentation = {
  severity: "critical",
  mentions: ["<!here>"],
  links: [
    { label: "Console", url: "https://console.acme.io/orgs/acme/projects/storefront/services/api" },
    { label: "Execution logs", url: "https://console.acme.io/executions/c0ffee01-7a2b-4c3d-8e4f-5a6b7c8d9e0f/logs" },
    { label: "Runbook", url: "https://wiki.acme.io/runbooks/api?env=production&team=payments" },
  ],
};

/** The presentation a route gives a close: its links, the event's own severity. */
export const presentationOf = (detail: LookoutEventDetail): Presentation => ({ ...PRESENTATION, severity: detail.severity });

/**
 * An incident's messages as the email channel renders them, in order: each follow-up knows the first
 * alert and the Message-ID of the message before it.
 */
export function renderIncidentEmails(details: readonly LookoutEventDetail[], address: { from: string; to: string[] }): EmailMessage[] {
  const [first] = details;
  const out: EmailMessage[] = [];
  for (const d of details) {
    const previous = out.at(-1)?.headers?.["Message-ID"];
    const followUp = d === first ? {} : { incident: { first: first! }, ...(previous ? { previousMessageId: previous } : {}) };
    out.push(renderEmail(d, { ...address, presentation: presentationOf(d), ...followUp }));
  }
  return out;
}
