/**
 * An application's deployment history: executions as state machines (lib/poll/transitions.ts).
 * The history has no cursor: a small page is read when quiet, and when a page shares nothing with what
 * is known (or an execution being followed fell off it), read again at once with a larger page.
 */
import type { RejectedItem } from "../../platform/client.js";
import type { DeploymentHistoryItem } from "../../platform/schemas.js";
import type { CommitRecord, ServiceContext, DeploymentObservation } from "../../model/observations.js";
import { deploymentAlertId, deploymentDetail, withOrganizationName } from "../../alerts/build.js";
import { type ExecutionDecision, type SourceCursor, type StoredExecution, recordUnwritable } from "../../model/ingest-store.js";
import type { AlertItem } from "../../model/alert-item.js";
import { newAlertItem } from "../../alerts/outbox-item.js";
import { boundRecord } from "../../model/bounds.js";
import { executionEntryId, executionRow } from "../../model/audit-row.js";
import { normalizeDeployment } from "../normalize.js";
import type { ServiceState } from "../../model/transitions.js";
import { decideDeploymentTransition, enteredCounts, timesEntered } from "../transitions.js";
import { classifyStatus } from "../deployment-status.js";
import { type Instant, compareInstants, plausibleInstant } from "../../model/time.js";
import { type PollContext, type SourceReader, backfillCutoff, countAlert, hasSpare, namingSource, quarantineRecord, suppressionFor, takeRejected } from "./reader.js";
import { organizationNames } from "../platform-names.js";
import { withPlatformNames } from "../../alerts/event-names.js";
import { CHANGE_NOTES, commitRange, sameCommit, unlisted } from "../commit-range.js";
import { type ListedChanges, changesDetail } from "../../alerts/changes-listed.js";
import { normalizeCommit } from "../normalize.js";
import type { PlatformError } from "../../platform/errors.js";

export const DEPLOYMENT_PAGE_MIN = 5;
export const DEPLOYMENT_PAGE_MAX = 100;
/**
 * The most deployment entries one poll reads, newest first, whatever the platform answered: a platform
 * that ignores pageSize (docs/platform.md) must not hold a poll past its time with thousands of writes.
 */
export const DEPLOYMENT_READ_MAX = 500;

/** Statuses an execution's stored history keeps; `entered` counts all of them. */
const HISTORY_KEPT = 50;

export const deploymentHistory: SourceReader = { read: readDeployments };

async function readDeployments(poll: PollContext): Promise<void> {
  const { req, deps, result } = poll;
  const key = result.source;
  const cursor = await deps.store.getCursor(key);
  result.firstSight = !cursor;
  const known = knownStatuses(cursor);
  let pageSize = cursor?.page_size ?? (cursor ? DEPLOYMENT_PAGE_MIN : 20);
  const observedAt = deps.now().toISOString();
  const nowMs = Date.parse(observedAt);

  let { items: page, rejected } = await readPage(poll, pageSize);
  const normalize = (items: DeploymentHistoryItem[]) => items.map((item) => boundRecord(normalizeDeployment(item, req.source, observedAt)));
  let observations = normalize(page);
  const followed = [...known].filter(([, status]) => classifyStatus(status) === "in_progress").map(([k]) => k);
  const missing = (obs: DeploymentObservation[]) => {
    const ids = new Set(obs.map(execKey));
    const overlap = [...known.keys()].some((k) => ids.has(k));
    const lostFollowed = followed.some((k) => !ids.has(k));
    return known.size > 0 && obs.length >= pageSize && (!overlap || lostFollowed);
  };
  if (missing(observations) && pageSize < DEPLOYMENT_PAGE_MAX) {
    pageSize = DEPLOYMENT_PAGE_MAX;
    ({ items: page, rejected } = await readPage(poll, pageSize));
    observations = normalize(page);
  }
  // The rejected items of the page kept (a re-read at the larger size lists them again).
  await takeRejected(poll, rejected);
  const gap = missing(observations);
  if (gap) {
    result.gapSuspected = true;
    deps.log.warn("deployment history may have a gap: a full page shares nothing with what was known", {
      source: key, pageSize,
    });
  }

  const cutoff = backfillCutoff(poll, cursor);
  const listedBelow = startsListedAbove(observations, nowMs);
  observations = onePerExecution(observations, nowMs);
  // Oldest first, so a failure is recorded before the success that recovers it. An entry without a
  // usable start is ordered by when Lookout saw it (now), but never after an entry listed above it
  // (docs/platform.md, "Timestamps").
  const startOf = (o: DeploymentObservation) =>
    entryInstant(o.created_at, o.created_at_raw, nowMs) ?? { ms: Math.min(nowMs, listedBelow.get(execKey(o)) ?? Infinity), nanos: 0 };
  observations.sort((a, b) => compareInstants(startOf(a), startOf(b)));
  if (observations.length > DEPLOYMENT_READ_MAX) {
    deps.log.warn("deployment history answered far more than asked: the newest entries were read, the older ones are history", {
      source: key, asked: pageSize, answered: observations.length, read: DEPLOYMENT_READ_MAX,
    });
    observations = newestKept(observations, (o) => known.get(execKey(o)) !== o.status, DEPLOYMENT_READ_MAX);
    result.gapSuspected = true;
  }
  const changed = observations.filter((o) => known.get(execKey(o)) !== o.status);
  const contexts = changed.length
    ? await deps.store.getServiceContexts([...new Set(changed.map((o) => o.service_id))])
    : new Map<string, ServiceContext>();
  // Names only when an execution ended: only then can an alert be raised.
  const names = changed.some((o) => classifyStatus(o.status) !== "in_progress")
    ? await organizationNames(poll, req.source.organizationId)
    : undefined;
  const failures: Failure[] = [];

  for (const obs of changed) {
    const ctx: ServiceContext = { ...contexts.get(obs.service_id), ...deps.configured?.get(obs.application_id) };
    let before: ServiceState | undefined;
    const decide = (prev: StoredExecution | undefined, svc: ServiceState): ExecutionDecision<AlertItem> => {
      before = svc;
      // The nth time this execution entered this status: a re-run that fails again is another alert.
      const occurrence = timesEntered(prev, obs.status) + 1;
      const d = decideDeploymentTransition(prev, obs, svc, deploymentAlertId(obs, occurrence), observedAt, listedBelow.get(execKey(obs)));
      if (!d.changed) return { changed: false };
      const execution = nextExecution(prev, obs, observedAt);
      // Backfill stays quiet, but the close of an incident people were told of is news: its root turns resolved.
      const suppression = d.transition === "recovered" && svc.told ? undefined : suppressionFor(obs.updated_at ?? obs.created_at, cutoff, deps.backfillWindowMs);
      const told = !suppression && (d.transition === "failed" || d.transition === "still_failing") && d.service.failing && !d.service.told;
      const service = told ? { ...d.service, told: true } : d.service;
      const stored = { changed: true as const, execution, audit: executionRow(obs, ctx, execution.first_seen_at), service };
      if (!d.transition) return stored;
      const detail = withPlatformNames(withOrganizationName(deploymentDetail({
        obs, transition: d.transition, ctx, observedAt, previousStatus: prev?.status,
        failureCount: d.failureCount, incidentId: d.incidentId, incident: d.incident, occurrence,
      }), deps.organizationNames), names);
      const alert = newAlertItem(detail, observedAt, deps.store.expiresAt(), suppression);
      return { ...stored, alert: namingSource(alert, executionEntryId(obs.service_id, obs.execution_id)), outcome: alert };
    };
    const res = await deps.store
      .observeExecution({ serviceId: obs.service_id, executionId: obs.execution_id }, decide)
      .catch((err: unknown) => quarantineObservation(poll, err, obs));
    if (!res) continue; // quarantined: handled, the cursor records its status
    if (res.outcome) countAlert(poll, res.outcome);
    if (res.changed) result.newRecords++;
    const failed = res.outcome?.detail.transition;
    if (res.outcome && !res.outcome.suppression && (failed === "failed" || failed === "still_failing")) {
      failures.push({ alert: res.outcome, obs, since: before?.last_success_commit });
    }
  }

  const executions = new Map(observations.map((o) => [execKey(o), o.status]));
  result.inProgress = observations.filter((o) => classifyStatus(o.status) === "in_progress").length;
  // Quiet (the page overlapped and nothing is in progress): back to the small page at once. A burst
  // larger than it is caught by the overlap check above, at the cost of one more request.
  const nextSize = gap || result.inProgress > 0 ? pageSize : DEPLOYMENT_PAGE_MIN;
  const next: SourceCursor = {
    source: key,
    version: (cursor?.version ?? 0) + 1,
    deployments: observations.map(({ service_id, execution_id, status }) => ({ service_id, execution_id, status })),
    page_size: nextSize,
    ...(gap ? { gap_suspected_at: observedAt } : cursor?.gap_suspected_at ? { gap_suspected_at: cursor.gap_suspected_at } : {}),
    first_polled_at: cursor?.first_polled_at ?? observedAt,
  };
  if (!cursor || !sameStatuses(known, executions) || cursor.page_size !== nextSize || gap) {
    await deps.store.saveCursor(next, cursor?.version);
  }
  // After the failures' alerts are stored, never before: listing the commits must not delay them.
  const lists = new Map<string, Promise<CommitRecord[]>>();
  for (const f of failures) await raiseChanges(poll, f, observedAt, lists);
}

/**
 * The newest `max` of entries ordered oldest first, in that order, those `changed` since the last poll
 * taken first: entries without a usable start all sort as now, so old ones the platform lists again
 * without a time would otherwise push a new failure out of what is read.
 */
export function newestKept<T>(entries: readonly T[], changed: (e: T) => boolean, max: number): T[] {
  const kept = new Set<T>();
  for (const wanted of [true, false]) {
    for (let i = entries.length - 1; i >= 0 && kept.size < max; i--) if (changed(entries[i]!) === wanted) kept.add(entries[i]!);
  }
  return entries.filter((e) => kept.has(e));
}

/** A failure alert this poll stored, and the commit of the service's last success before it. */
interface Failure {
  alert: AlertItem;
  obs: DeploymentObservation;
  since?: string;
}

/**
 * The failure's `changes_listed` amendment (docs/events.md): the commits since the last success, from
 * endpoint 16 when the budget has room, else said why. Skipped where there is nothing to compare: no
 * budget to ask, a failure without a commit, a service whose commits endpoint 16 does not list. Its id is
 * stable, so it is raised once; a failure to raise it is logged, and the poll goes on.
 */
async function raiseChanges(poll: PollContext, f: Failure, observedAt: string, lists: Map<string, Promise<CommitRecord[]>>): Promise<void> {
  const { deps } = poll;
  const until = f.obs.commit?.id;
  if (!deps.spare || !until || (f.obs.service_type ?? "APPLICATION") !== "APPLICATION") return;
  try {
    const listed = await listChanges(poll, f.obs.service_id, f.since, until, lists);
    const alert = newAlertItem(changesDetail(f.alert.detail, listed, observedAt), observedAt, deps.store.expiresAt());
    if (await deps.store.raiseAlert(namingSource(alert, executionEntryId(f.obs.service_id, f.obs.execution_id)))) countAlert(poll, alert);
  } catch (err) {
    deps.log.error("could not raise the commits since the last success; the failure's alert stands", {
      source: poll.result.source, alert: f.alert.detail.id, error: (err as Error).message,
    });
  }
}

/** `lists`: an application's commits read once a poll, however many of its failures it raised. */
async function listChanges(
  poll: PollContext, applicationId: string, since: string | undefined, until: string, lists: Map<string, Promise<CommitRecord[]>>,
): Promise<ListedChanges> {
  if (!since || sameCommit(since, until)) return commitRange([], since, until);
  let listing = lists.get(applicationId);
  if (!listing) {
    if (!(await hasSpare(poll, 1))) return unlisted(since, until, CHANGE_NOTES.budgetShort);
    listing = readCommits(poll, applicationId);
    lists.set(applicationId, listing);
  }
  try {
    return commitRange(await listing, since, until);
  } catch (err) {
    const e = err as PlatformError;
    if (!e.cost) throw err;
    return unlisted(since, until, CHANGE_NOTES.unavailable(e.kind));
  }
}

async function readCommits(poll: PollContext, applicationId: string): Promise<CommitRecord[]> {
  try {
    const res = await poll.deps.client.list("listApplicationCommits", { path: { applicationId } });
    poll.spend(res.cost);
    return res.items.map(normalizeCommit);
  } catch (err) {
    const e = err as PlatformError;
    if (e.cost) poll.spend(e.cost);
    throw err;
  }
}

async function readPage(poll: PollContext, pageSize: number): Promise<{ items: DeploymentHistoryItem[]; rejected: RejectedItem[] }> {
  const res = await poll.deps.client.list("listDeploymentHistory", { path: { applicationId: poll.req.source.id }, query: { pageSize } });
  poll.spend(res.cost);
  return { items: res.items, rejected: res.rejected };
}

/** The execution as stored after this observation: its status, when first seen, how often it entered each status. */
function nextExecution(prev: StoredExecution | undefined, obs: DeploymentObservation, observedAt: string): Omit<StoredExecution, "version"> {
  return {
    status: obs.status,
    first_seen_at: prev?.first_seen_at ?? observedAt,
    first_seen_status: prev?.first_seen_status ?? obs.status,
    entered: [...enteredCounts(prev).set(obs.status, timesEntered(prev, obs.status) + 1)].map(([status, times]) => ({ status, times })),
    observation: obs,
    history: [...(prev?.history ?? []), { status: obs.status, observed_at: observedAt }].slice(-HISTORY_KEPT),
  };
}

/** An observation the store refuses for what it is is quarantined (undefined); any other error fails the poll. */
async function quarantineObservation(poll: PollContext, err: unknown, obs: DeploymentObservation): Promise<undefined> {
  const refusal = recordUnwritable(err);
  if (!refusal) throw err;
  await quarantineRecord(poll, refusal, {
    kind: "deployment", id: executionEntryId(obs.service_id, obs.execution_id), organization: obs.organization_id,
    content: obs, refs: { service: { id: obs.service_id } },
  });
  return undefined;
}

/** Same executions with the same statuses, whatever the order (entries can share a timestamp). */
function sameStatuses(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([k, v]) => b.get(k) === v);
}

/** An execution is known by its service and its id: two services of one history can share an execution id. */
const execKey = (o: { service_id: string; execution_id: string }) => JSON.stringify([o.service_id, o.execution_id]);

/** The cursor's statuses by execKey. */
const knownStatuses = (cursor: SourceCursor | undefined) =>
  new Map((cursor?.deployments ?? []).map((d) => [execKey(d), d.status]));

/** An entry's time as an instant, nanoseconds included; undefined when missing or implausible. */
const entryInstant = (iso: string | undefined, raw: string | undefined, nowMs: number): Instant | undefined =>
  plausibleInstant(raw ?? iso, nowMs);

/**
 * For each execution without a usable start, listed below ones that have one: just before the earliest
 * of those starts. The platform lists newest first (implied, not promised: docs/platform.md), and for an
 * entry with no time its place in the list is the only evidence of when it happened: an old entry read
 * for the first time (past what first sight read) must not count as newer than the failure listed above
 * it. The earliest, not the nearest: a stray date ahead listed below the failure must not lift the bound
 * past it (a false resolution); a stray old date only keeps what is below it from resolving (a delay).
 * An execution listed twice takes its highest place.
 */
export function startsListedAbove(pageOrder: readonly DeploymentObservation[], nowMs: number): Map<string, number> {
  const bounds = new Map<string, number>();
  const placed = new Set<string>();
  let above: number | undefined;
  for (const o of pageOrder) {
    const start = entryInstant(o.created_at, o.created_at_raw, nowMs)?.ms;
    if (start !== undefined) above = above === undefined ? start : Math.min(above, start);
    else if (!placed.has(execKey(o)) && above !== undefined) bounds.set(execKey(o), above - 1);
    placed.add(execKey(o));
  }
  return bounds;
}

/**
 * One observation per execution: a page can list an execution twice. Which copy is kept does not depend
 * on the page's order (or polls would flap between them): the later updated, then a finished state over
 * one in progress, then the greater status.
 */
function onePerExecution(observations: DeploymentObservation[], nowMs: number): DeploymentObservation[] {
  const updated = (o: DeploymentObservation) => entryInstant(o.updated_at, o.updated_at_raw, nowMs) ?? { ms: -Infinity, nanos: 0 };
  const finished = (o: DeploymentObservation) => (classifyStatus(o.status) === "in_progress" ? 0 : 1);
  const later = (a: DeploymentObservation, b: DeploymentObservation) =>
    (compareInstants(updated(a), updated(b)) || finished(a) - finished(b) || (a.status > b.status ? 1 : a.status < b.status ? -1 : 0)) > 0;
  const byKey = new Map<string, DeploymentObservation>();
  for (const o of observations) {
    const had = byKey.get(execKey(o));
    if (!had || later(o, had)) byKey.set(execKey(o), o);
  }
  return [...byKey.values()];
}
