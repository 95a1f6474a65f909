/**
 * `lookout status` (docs/status.md): polling, the request budget, receivers, held digests and quarantine,
 * read through ports and judged healthy or not. `readStatus` only reads; `statusReport` is pure, so the
 * verdict is the same whether the ports read DynamoDB Local or the deployed table.
 */
import type { DispatchState, FeedLoopState, Watchlist } from "../model/dispatch.js";
import type { HeldAlert, NotifyStore, ReceiverFailures } from "../model/notify-store.js";
import { sourceKey } from "../model/source.js";
import { healthFacts } from "../dispatch/health-facts.js";
import { DISPATCH_POLICY, lastOkAt } from "../dispatch/source-state.js";
import { idleIntervalMs } from "../dispatch/plan.js";
import * as budget from "../dispatch/budget.js";
import { feedReadsNow, loopAlive } from "../dispatch/feed-loop.js";

/** Version of the JSON output (docs/status.schema.json); raised when a field changes meaning. */
export const STATUS_SCHEMA_VERSION = 1;

/** A quarantined thing is a problem for this long after it was set aside (docs/status.md, "Verdict"). */
export const DEFAULT_QUARANTINE_WITHIN_MS = 24 * 3_600_000;

/** An alert held or in flight this long is listed per receiver (docs/status.md, "Waiting alerts"). */
export const WAITING_LISTED_AFTER_MS = 60_000;
/** In flight this long (a sender died and nothing took over), it makes status unhealthy. */
export const WAITING_BOUND_MS = 10 * 60_000;
/** A retryable failure older than this has been dead-lettered: the receiver's failures and health speak of it. */
const RETRIED_WITHIN_MS = 3_600_000;
/** How many waiting alerts are listed per receiver (all are counted). */
const WAITING_LISTED = 20;

/** How far back the last delivery to each receiver is looked for. */
export const DELIVERY_LOOKBACK_MS = 7 * 86_400_000;

export interface ReceiverRef {
  id: string;
  label: string;
}

/** A delivery as the audit trail shows it, by the receiver's label. */
export interface SeenDelivery {
  receiver: string;
  state: string;
  updated_at: string;
  alert_id: string;
  error?: string;
  permanent?: boolean;
}

export interface QuarantineSeen {
  at: string;
  id: string;
  kind: string;
  stage?: string;
  reason?: string;
}

/** What status reads; lib/app/status.ts builds them on a DynamoDB table. */
export interface StatusPorts {
  dispatchState(): Promise<DispatchState | undefined>;
  /** The change feed's loop: its lease (docs/architecture.md, "The change feed's loop"). */
  feedLoop(): Promise<FeedLoopState | undefined>;
  notify: Pick<NotifyStore, "receiverFailures" | "heldFor">;
  /** Deliveries since `since` (ISO), newest first, at most about `limit` alerts' worth. */
  recentDeliveries(since: string, limit: number): Promise<SeenDelivery[]>;
  /** Quarantined records and alerts since `since`, newest first, at most `limit`; `more` when there are others. */
  quarantined(since: string, limit: number): Promise<{ rows: QuarantineSeen[]; more: boolean }>;
}

export interface StatusSettings {
  watch: Watchlist;
  receivers: readonly ReceiverRef[];
  digestWithinMs: number;
  failingAfter: number;
  stalledAfterMs?: number;
  quarantineWithinMs?: number;
}

export interface StatusFacts {
  now: number;
  dispatch: DispatchState | undefined;
  loop: FeedLoopState | undefined;
  receivers: Array<ReceiverRef & { failures?: ReceiverFailures; held: HeldAlert[]; deliveries: SeenDelivery[] }>;
  quarantine: { rows: QuarantineSeen[]; more: boolean };
}

const QUARANTINE_LIMIT = 1000;
const DELIVERY_ALERTS = 200;

export async function readStatus(ports: StatusPorts, settings: StatusSettings, now: number): Promise<StatusFacts> {
  const quarantineSince = new Date(now - (settings.quarantineWithinMs ?? DEFAULT_QUARANTINE_WITHIN_MS)).toISOString();
  const [dispatch, loop, deliveries, quarantine] = await Promise.all([
    ports.dispatchState(),
    ports.feedLoop(),
    ports.recentDeliveries(new Date(now - DELIVERY_LOOKBACK_MS).toISOString(), DELIVERY_ALERTS),
    ports.quarantined(quarantineSince, QUARANTINE_LIMIT),
  ]);
  const receivers = await Promise.all(settings.receivers.map(async (r) => {
    const [failures, held] = await Promise.all([ports.notify.receiverFailures(r.id), ports.notify.heldFor(r.id)]);
    return { ...r, ...(failures ? { failures } : {}), held, deliveries: deliveries.filter((d) => d.receiver === r.label) };
  }));
  return { now, dispatch, loop, receivers, quarantine };
}

// ---- The report ---------------------------------------------------------------------------------

export interface SourceStatus {
  source: string;
  last_poll_at: string | null;
  last_success_at: string | null;
  consecutive_failures: number;
  last_error: string | null;
  /** Backing off after failures: not polled before this. */
  backoff_until: string | null;
  /** The earliest the next poll may be planned (a tick's interval, the back-off). */
  next_poll_at: string | null;
  /** An idle source is polled by then at the latest, the budget permitting (the staleness queue's interval). */
  next_poll_by: string | null;
  in_progress: number;
  /** Records of a flood read but not stored yet: the next polls store them. */
  backlog: number;
  problem: string | null;
}

export interface ReceiverStatus {
  id: string;
  label: string;
  last_delivery_at: string | null;
  last_failure_at: string | null;
  last_error: string | null;
  consecutive_failures: number;
  failing_since: string | null;
  held: number;
  oldest_held_at: string | null;
  /** Alerts held for a digest or in flight (being sent, failed and to be retried) over a minute, oldest first. */
  waiting: number;
  waiting_alerts: WaitingAlert[];
  problem: string | null;
}

export interface WaitingAlert {
  alert_id: string;
  /** `held` (for a digest), `sending` (a sender holds it), `failed` (to be retried). */
  state: string;
  since: string;
}

/** What waits at a receiver for over a minute: held alerts, deliveries being sent, failures to be retried. */
export function waitingAt(held: readonly HeldAlert[], deliveries: readonly SeenDelivery[], now: number): WaitingAlert[] {
  const latest = new Map<string, SeenDelivery>();
  for (const d of deliveries) if (!latest.has(d.alert_id)) latest.set(d.alert_id, d); // newest first
  const inFlight = [...latest.values()].filter((d) =>
    d.state === "sending" || (d.state === "failed" && !d.permanent && now - Date.parse(d.updated_at) < RETRIED_WITHIN_MS));
  return [
    ...held.map((h) => ({ alert_id: h.detail.id, state: "held", since: h.held_at })),
    ...inFlight.map((d) => ({ alert_id: d.alert_id, state: d.state, since: d.updated_at })),
  ]
    .filter((w) => now - Date.parse(w.since) >= WAITING_LISTED_AFTER_MS)
    .sort((a, b) => a.since.localeCompare(b.since));
}

export interface StatusReport {
  schema_version: number;
  generated_at: string;
  verdict: "healthy" | "unhealthy";
  /** Why unhealthy, one sentence each; empty when healthy. */
  reasons: string[];
  dispatch: { last_tick_at: string | null };
  /**
   * The change feed's loop: `beating` (a tick within 30 s), `lost` (it ticked, but not for 30 s: dispatch
   * restarts it at its next tick and reads the feed meanwhile), or `off` (it never ticked, as with cron
   * runs, or no webhook is watched, or the budget in force has no room for it: dispatch reads the feed).
   */
  feed_loop: { state: "beating" | "lost" | "off"; last_tick_at: string | null; reads_per_tick: number };
  budget: {
    used_last_hour: number;
    /** Requests per hour in force (configured, or the platform's lower limit). */
    allowed_per_hour: number;
    /** The hard cap dispatch keeps to: the allowance less its reserve. */
    cap_per_hour: number;
    throttled_until: string | null;
  } | null;
  sources: SourceStatus[];
  receivers: ReceiverStatus[];
  quarantine: { within_hours: number; count: number; more: boolean; newest: QuarantineSeen | null };
}

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
const ago = (fromMs: number, now: number) => {
  const m = Math.round((now - fromMs) / 60_000);
  return m < 120 ? `${m} min` : m < 48 * 60 ? `${Math.round(m / 60)} h` : `${Math.round(m / 1440)} d`;
};

/** The report and its verdict from what was read. Pure. */
export function statusReport(facts: StatusFacts, settings: StatusSettings): StatusReport {
  const { now, dispatch } = facts;
  const reasons: string[] = [];
  const state: DispatchState = dispatch ?? { budget: budget.newBudget(settings.watch.requestsPerHour, now), sources: {} };
  const health = healthFacts(state, settings.watch, now, {
    failingAfter: settings.failingAfter,
    ...(settings.stalledAfterMs !== undefined ? { stalledAfterMs: settings.stalledAfterMs } : {}),
  });
  const failing = new Map(health.failing.map((f) => [f.source, f]));
  const stalled = new Map(health.stalled.map((f) => [f.source, f]));
  const idleMs = idleIntervalMs(settings.watch);

  const sources = settings.watch.sources.map((ref): SourceStatus => {
    const key = sourceKey(ref);
    const s = state.sources[key];
    const failures = s?.consecutive_failures ?? 0;
    const backoff = s?.next_allowed_at !== undefined && s.next_allowed_at > now ? s.next_allowed_at : undefined;
    const earliest = s?.last_polled_at === undefined ? undefined : Math.max(s.last_polled_at + DISPATCH_POLICY.minIntervalMs, backoff ?? 0);
    let problem: string | null = null;
    // No state is no problem: dispatch reaches a new source within minutes, and `run --once` records
    // only failures and news (a routine success is inferred, lib/dispatch/plan.ts).
    if (!s) problem = null;
    else if (failing.has(key)) problem = `${failures} polls failed in a row (${s.last_error ?? "unknown"})`;
    else if (stalled.has(key)) {
      const ok = lastOkAt(s);
      problem = ok === undefined ? `never read in ${ago(s.watched_since ?? now, now)} of watching` : `no successful poll for ${ago(ok, now)}`;
    }
    if (problem) reasons.push(`source ${key}: ${problem}`);
    return {
      source: key,
      last_poll_at: iso(s?.last_polled_at),
      last_success_at: iso(s ? lastOkAt(s) : undefined),
      consecutive_failures: failures,
      last_error: failures ? (s?.last_error ?? "unknown") : null,
      backoff_until: iso(backoff),
      next_poll_at: iso(earliest),
      next_poll_by: iso(earliest === undefined ? undefined : Math.max(earliest, s!.last_polled_at! + idleMs)),
      in_progress: s?.in_progress ?? 0,
      backlog: s?.backlog ?? 0,
      problem,
    };
  });
  if (health.tokenRejected) {
    reasons.push(`the platform refused the token (HTTP ${health.tokenRejected.statuses.join(", ")}) for ${health.tokenRejected.sources.join(", ")}`);
  }

  const receivers = facts.receivers.map((r): ReceiverStatus => {
    const sent = r.deliveries.find((d) => d.state === "sent");
    const failedRecord = r.deliveries.find((d) => d.state === "failed");
    const failures = r.failures?.consecutive_failures ?? 0;
    const lastFailureAt = r.failures?.updated_at ?? failedRecord?.updated_at ?? null;
    const oldest = r.held[0]?.held_at ?? null;
    const problems: string[] = [];
    // A run of failures is kept until a delivery gets through: the receiver is failing now.
    if (failures) problems.push(`${failures} deliveries failed in a row since ${r.failures!.since} (${r.failures!.last_error})`);
    if (oldest && now - Date.parse(oldest) > settings.digestWithinMs) {
      problems.push(`${r.held.length} alerts held for a digest since ${oldest}, over notify.digest_within`);
    }
    const waiting = waitingAt(r.held, r.deliveries, now);
    const stuck = waiting.filter((w) => w.state !== "held" && now - Date.parse(w.since) > WAITING_BOUND_MS);
    if (stuck.length) {
      problems.push(`${stuck.length} alerts not delivered after ${WAITING_BOUND_MS / 60_000}m, the oldest ${stuck[0]!.alert_id} (${stuck[0]!.state} since ${stuck[0]!.since}; lookout explain says why)`);
    }
    const problem = problems.length ? problems.join("; ") : null;
    if (problem) reasons.push(`receiver ${r.label}: ${problem}`);
    return {
      id: r.id,
      label: r.label,
      last_delivery_at: sent?.updated_at ?? null,
      last_failure_at: lastFailureAt,
      last_error: r.failures?.last_error ?? failedRecord?.error ?? null,
      consecutive_failures: failures,
      failing_since: r.failures?.since ?? null,
      held: r.held.length,
      oldest_held_at: oldest,
      waiting: waiting.length,
      waiting_alerts: waiting.slice(0, WAITING_LISTED),
      problem,
    };
  });

  const q = facts.quarantine;
  const withinMs = settings.quarantineWithinMs ?? DEFAULT_QUARANTINE_WITHIN_MS;
  if (q.rows.length) {
    reasons.push(`${q.rows.length}${q.more ? "+" : ""} records or alerts quarantined in the last ${withinMs / 3_600_000} h, the newest ${q.rows[0]!.id} (lookout audit --type quarantine)`);
  }

  return {
    schema_version: STATUS_SCHEMA_VERSION,
    generated_at: new Date(now).toISOString(),
    verdict: reasons.length ? "unhealthy" : "healthy",
    reasons,
    dispatch: { last_tick_at: iso(dispatch?.last_tick_at) },
    feed_loop: feedLoopStatus(facts, settings),
    budget: dispatch
      ? {
          used_last_hour: budget.spentInWindow(dispatch.budget, now),
          allowed_per_hour: budget.limitOf(dispatch.budget),
          cap_per_hour: budget.capOf(dispatch.budget),
          throttled_until: iso(dispatch.budget.throttled_until !== undefined && dispatch.budget.throttled_until > now ? dispatch.budget.throttled_until : undefined),
        }
      : null,
    sources,
    receivers,
    quarantine: { within_hours: withinMs / 3_600_000, count: q.rows.length, more: q.more, newest: q.rows[0] ?? null },
  };
}

function feedLoopStatus({ now, dispatch, loop }: StatusFacts, settings: StatusSettings): StatusReport["feed_loop"] {
  const reads = feedReadsNow(settings.watch, dispatch);
  return { state: !reads || !loop ? "off" : loopAlive(loop, now) ? "beating" : "lost", last_tick_at: iso(loop?.beat_at), reads_per_tick: reads };
}

// ---- The table --------------------------------------------------------------------------------

const time = (v: string | null, now: number) => (v ? `${v.slice(0, 19).replace("T", " ")} (${Date.parse(v) <= now ? `${ago(Date.parse(v), now)} ago` : `in ${ago(now, Date.parse(v))}`})` : "-");

/**
 * The report for people: a block per section, each source and receiver on its own lines so ids are
 * never clipped, and lines within 120 characters but for long ids.
 */
export function statusLines(r: StatusReport): string[] {
  const now = Date.parse(r.generated_at);
  const out: string[] = [];
  out.push(`lookout status at ${r.generated_at}: ${r.verdict.toUpperCase()}`);
  for (const reason of r.reasons) out.push(`  ! ${reason}`);
  out.push("");
  out.push(`dispatch: last tick ${time(r.dispatch.last_tick_at, now)}`);
  const loop = r.feed_loop;
  out.push(`change feed loop: ${loop.state === "off"
    ? `not running (${loop.reads_per_tick ? "it never ticked, as with cron runs" : "no webhook watched, or no room for it in the budget in force"}): dispatch reads the feed at its ticks`
    : `${loop.state === "beating" ? "beating" : "LOST: dispatch restarts it at its next tick and reads the feed meanwhile"}, ` +
      `${loop.reads_per_tick} read${loop.reads_per_tick === 1 ? "" : "s"} a tick; last tick ${time(loop.last_tick_at, now)}`}`);
  out.push(r.budget
    ? `budget: ${r.budget.used_last_hour} requests in the last hour of ${r.budget.allowed_per_hour} allowed (cap ${r.budget.cap_per_hour})` +
        (r.budget.throttled_until ? `; throttled by the platform until ${r.budget.throttled_until}` : "")
    : "budget: nothing spent yet (dispatch has no state)");
  out.push("");
  out.push(`sources (${r.sources.length}):`);
  for (const s of r.sources) {
    out.push(`  ${s.source}  ${s.problem ? `FAILING: ${s.problem}` : "ok"}`);
    out.push(`    last poll ${time(s.last_poll_at, now)}; last success ${time(s.last_success_at, now)}; failures in a row ${s.consecutive_failures}` +
      (s.last_error ? ` (${s.last_error})` : ""));
    out.push(`    next poll from ${time(s.next_poll_at, now)}, by ${time(s.next_poll_by, now)}` +
      (s.backoff_until ? `; backing off until ${s.backoff_until}` : "") + (s.in_progress ? `; ${s.in_progress} in progress` : "") +
      (s.backlog ? `; ${s.backlog} records of a flood left for the next polls` : ""));
  }
  out.push("");
  out.push(`receivers (${r.receivers.length}):`);
  for (const c of r.receivers) {
    out.push(`  ${c.label}  [${c.id}]  ${c.problem ? `FAILING: ${c.problem}` : "ok"}`);
    out.push(`    last delivery ${time(c.last_delivery_at, now)}; last failure ${time(c.last_failure_at, now)}; failures in a row ${c.consecutive_failures}`);
    if (c.last_error) out.push(`    last error: ${c.last_error}`);
    out.push(`    held for a digest: ${c.held}${c.oldest_held_at ? `, oldest ${time(c.oldest_held_at, now)}` : ""}`);
    if (c.waiting) out.push(`    waiting over a minute: ${c.waiting}${c.waiting > c.waiting_alerts.length ? ` (the oldest ${c.waiting_alerts.length} listed)` : ""}`);
    for (const w of c.waiting_alerts) out.push(`      ${w.alert_id}  ${w.state} since ${time(w.since, now)}`);
  }
  out.push("");
  const q = r.quarantine;
  out.push(`quarantine (last ${q.within_hours} h): ${q.count}${q.more ? "+" : ""}` +
    (q.newest ? `; newest ${q.newest.at} ${q.newest.kind}${q.newest.stage ? ` at ${q.newest.stage}` : ""}` : ""));
  if (q.newest) out.push(`  ${q.newest.id}${q.newest.reason ? `: ${q.newest.reason}` : ""}`);
  return out;
}
