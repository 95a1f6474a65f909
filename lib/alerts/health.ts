/**
 * Lookout's reports on itself (`Lookout Health`): the token rejected, a source failing repeatedly,
 * polling stalled, a receiver failing after its retries, dead letters or a backlog in its own queues. Pure. Each condition raises one event per
 * episode — its id is anchored on the last time things were fine — and a reminder once a day while it
 * lasts, so a long outage neither floods a channel nor goes quiet.
 */
import type { HealthCheck, LookoutEventDetail } from "../model/event.js";
import { EVENT_VERSION, severityOf } from "../model/event.js";
import type { SourceHealthFacts } from "../model/health-facts.js";
import { contentHash } from "../model/hash.js";
import { parseSourceKey } from "../model/source.js";
import type { QuarantinedThing } from "../model/quarantine.js";

const DAY = 86_400_000;

function healthDetail(args: {
  check: HealthCheck;
  organization: string;
  subject: string;
  /** When the episode started (the last success, or the first failure). */
  anchor: string;
  now: Date;
  summary: string;
  detail: string;
  consecutiveFailures?: number;
}): LookoutEventDetail {
  const { check, now } = args;
  const reminder = Math.max(0, Math.floor((now.getTime() - Date.parse(args.anchor)) / DAY));
  return {
    version: EVENT_VERSION,
    id: contentHash("health", check, args.subject, args.anchor, reminder),
    kind: "health",
    transition: check,
    severity: severityOf("health", check),
    organization: { id: args.organization },
    status: check.toUpperCase(),
    // When Lookout found it: the anchor only names the episode (a source that never succeeded is
    // anchored on the day), and an audit trail read newest first must show it when it was raised.
    occurred_at: now.toISOString(),
    observed_at: now.toISOString(),
    summary: reminder ? `${args.summary} (still, day ${reminder + 1})` : args.summary,
    health: {
      check,
      subject: args.subject,
      detail: args.detail,
      ...(args.consecutiveFailures !== undefined ? { consecutive_failures: args.consecutiveFailures } : {}),
    },
  };
}

const orgOf = (source: string) => parseSourceKey(source)?.organizationId ?? "unknown";
const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** Events for what dispatch knows: token rejected, sources failing, polling stalled. */
export function healthFromFacts(
  facts: SourceHealthFacts,
  anchors: (source: string) => string | undefined,
  now: Date,
): LookoutEventDetail[] {
  const out: LookoutEventDetail[] = [];
  // A source that never succeeded has no last success: anchor it on the day, one event a day.
  const today = new Date(Math.floor(now.getTime() / DAY) * DAY).toISOString();
  const anchorOf = (source: string) => anchors(source) ?? today;
  if (facts.tokenRejected) {
    const sources = facts.tokenRejected.sources;
    const first = sources[0]!;
    out.push(healthDetail({
      check: "token_rejected", organization: orgOf(first), subject: "platform token", anchor: sources.map(anchorOf).sort()[0]!, now,
      summary: `The platform rejects Lookout's token (HTTP ${facts.tokenRejected.statuses.join("/")}): nothing is being watched`,
      detail: `${sources.length} source(s) refused, e.g. ${first}. Replace the token (platform.token) and check its permissions.`,
    }));
  }
  const rejected = new Set(facts.tokenRejected?.sources ?? []);
  for (const f of facts.failing) {
    if (rejected.has(f.source)) continue; // said once above, for all of them
    out.push(healthDetail({
      check: "source_failing", organization: orgOf(f.source), subject: f.source, anchor: anchorOf(f.source), now,
      consecutiveFailures: f.consecutiveFailures,
      summary: `Polling ${f.source} failed ${f.consecutiveFailures} times in a row (${f.lastError})`,
      detail: `Failures of this source are not being seen. Last error kind: ${f.lastError}. Lookout backs off and keeps trying.`,
    }));
  }
  for (const s of facts.stalled) {
    if (rejected.has(s.source)) continue;
    const [anchor, summary, since] = s.lastOkAt === undefined
      ? [s.watchedSince, `${s.source} has not been read once in ${minutes(s.silentForMs)} of watching`, `Never read since Lookout began watching it at ${s.watchedSince}`]
      : [s.lastOkAt, `No successful poll of ${s.source} for ${minutes(s.silentForMs)}`, `Last successful poll at ${s.lastOkAt}`];
    out.push(healthDetail({
      check: "polling_stalled", organization: orgOf(s.source), subject: s.source, anchor, now, summary,
      detail: `${since}. Check the schedule, dispatch's errors (polls it could not send), the poll dead-letter queue and the request budget.`,
    }));
  }
  return out;
}

/**
 * A receiver failed after its retries. Said once per episode: the id is anchored on the first failure
 * of the receiver's current run (`run.since`, kept in the table so every worker agrees), with a daily
 * reminder while it lasts. Without a run, once per receiver and hour.
 */
export function receiverFailing(
  alert: LookoutEventDetail,
  receiverLabel: string,
  error: string,
  now: Date,
  run?: { since: string; consecutive_failures: number },
): LookoutEventDetail {
  const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000).toISOString();
  return healthDetail({
    check: "receiver_failing", organization: alert.organization.id, subject: receiverLabel, anchor: run?.since ?? hour, now,
    ...(run ? { consecutiveFailures: run.consecutive_failures } : {}),
    summary: `Lookout could not deliver to ${receiverLabel}: ${error}`,
    detail: `Alert ${alert.id} (${alert.summary}) was not delivered there; it went to the fallback receiver if one is configured.`,
  });
}

/** One of Lookout's queues as dispatch sampled it (lib/app/cloud/queue-gauge.ts). */
export interface QueueSample {
  /** The queue's logical name in the stack (infra/queues.yml), e.g. SlackDeadLetterQueue. */
  queue: string;
  /** A dead-letter queue: any message in it is a failure Lookout gave up on. */
  deadLetter: boolean;
  /** What its messages are, for the reader of the event. */
  what: string;
  /** Messages in it: waiting or in flight (SQS ApproximateNumberOfMessages and …NotVisible). */
  visible: number;
}

/** How long a work queue may show messages at every sample before it is a backlog (as the alarms it replaces). */
export const QUEUE_BACKLOG_AFTER_MS = 15 * 60_000;

/**
 * What Lookout's queues say: dead letters at once, a work queue that has not been emptied for
 * QUEUE_BACKLOG_AFTER_MS. `since` remembers, per queue, since when it showed messages at every sample
 * (kept in the dispatch state); a queue not sampled this time (its read failed) keeps what it had.
 * One event per episode, reminded daily, like every health check.
 */
export function queueHealth(
  samples: readonly QueueSample[],
  since: Readonly<Record<string, number>>,
  organization: string,
  now: Date,
): { since: Record<string, number>; events: LookoutEventDetail[] } {
  const next: Record<string, number> = { ...since };
  const events: LookoutEventDetail[] = [];
  for (const q of samples) {
    if (q.visible <= 0) {
      delete next[q.queue];
      continue;
    }
    const from = (next[q.queue] ??= now.getTime());
    const anchor = new Date(from).toISOString();
    if (q.deadLetter) {
      events.push(healthDetail({
        check: "dead_letters", organization, subject: q.queue, anchor, now,
        summary: `${q.visible} dead letter(s) in ${q.queue}: ${q.what}`,
        detail: `Lookout gave up on them; nothing retries them. docs/deploy.md ("Dead letters") says how to read them and send them back.`,
      }));
    } else if (now.getTime() - from >= QUEUE_BACKLOG_AFTER_MS) {
      events.push(healthDetail({
        check: "queue_backlog", organization, subject: q.queue, anchor, now,
        summary: `${q.queue} has not been emptied for ${minutes(now.getTime() - from)} (${q.visible} waiting): ${q.what}`,
        detail: `Messages wait since ${anchor} at the latest: their consumer is failing, throttled or stopped. See its log group and docs/deploy.md ("Dead letters").`,
      }));
    }
  }
  return { since: next, events };
}

const short = (s: string, max = 200) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** Said once per quarantined thing: its id is the thing's, not the time's. */
export function quarantinedHealth(q: QuarantinedThing, now: Date): LookoutEventDetail {
  const what = q.stage === "ingest" ? `${q.kind.replace("_", " ")} ${short(q.id, 80)} from ${short(q.source, 120)} could not be stored` : `alert ${short(q.id, 80)} (${q.kind}) could not be published`;
  const d = healthDetail({
    check: "quarantined", organization: q.organization, subject: short(`${q.stage} ${q.kind} ${q.id}`, 400), anchor: now.toISOString(), now,
    summary: `A ${what}: quarantined (${short(q.reason, 120)})`,
    detail: `It was set aside so that it blocks nothing after it. See lookout audit --type quarantine and lookout explain ${short(q.id, 200)}. Reason: ${short(q.reason, 1000)}`,
  });
  return { ...d, id: contentHash("health", "quarantined", q.stage, q.id) };
}
