/**
 * One poll of one source: read it, normalize, store what is new (conditional writes), raise alerts into
 * the outbox, remember what was seen. Shared by functions/poll and the local runner.
 *
 * Rules that hold for every source:
 * - Nothing new on the platform → nothing written.
 * - An item that does not match its schema is logged and skipped; it is not marked seen, so it is read
 *   again next time, and the valid items beside it are stored.
 * - A failed read (error, malformed body) changes nothing: no cursor moves past unseen data.
 * - A record DynamoDB refuses for what it is (too large even after clipping) is quarantined and counts
 *   as handled; the records beside it are stored. A passing store error (throttling, network) still
 *   fails the poll, after the other records were tried, and the cursor does not move.
 */
import pMap from "p-map";
import type { PlatformApi, PlatformClient, RejectedItem } from "../platform/client.js";
import type { CallCost, RateLimitHeaders } from "../platform/cost.js";
import type { PlatformError } from "../platform/errors.js";
import type { ClusterLogEntry, DeploymentHistoryItem, WebhookEvent } from "../platform/schemas.js";
import type { LookoutEventDetail, NamedRef } from "../model/event.js";
import { clusterDetail, deliveryDetail, deploymentAlertId, deploymentDetail, withOrganizationName } from "../alerts/build.js";
import type { ServiceContext, DeploymentObservation } from "../model/observations.js";
import { recordItem } from "../model/items.js";
import type { Suppression } from "../model/alert-item.js";
import { newAlertItem } from "../alerts/outbox-item.js";
import type { IngestStore, SourceCursor } from "../store/ingest-store.js";
import { normalizeClusterLog, normalizeDeployment, normalizeWebhookDelivery } from "./normalize.js";
import { type SourceRef, parseSourceKey, sourceKey } from "../model/source.js";
import { contentHash } from "../model/hash.js";
import { decideDeploymentTransition, timesEntered } from "./transitions.js";
import { classifyStatus } from "./status.js";
import { type Instant, compareInstants, plausibleInstant } from "../model/time.js";
import { knownSecretsOf, redact, redactText } from "../platform/redact.js";
import { formatDuration } from "../config/duration.js";
import { boundRecord } from "../model/bounds.js";
import { isUnwritable } from "../store/quarantine.js";
import type { QuarantineEntry } from "../model/quarantine.js";
import { setAside } from "../alerts/quarantine.js";
import { executionEntryId } from "../model/audit-row.js";

export interface Log {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

export interface PollDeps {
  client: PlatformClient & PlatformApi;
  store: IngestStore;
  now: () => Date;
  backfillWindowMs: number;
  /** Names from configuration, by application id; the change feed's directory fills the rest. */
  configured?: Map<string, ServiceContext>;
  clusterNames?: Map<string, string>;
  /** Organization names from configuration (`watch[].name`), by organization id. */
  organizationNames?: Map<string, string>;
  log: Log;
  /** Told of each alert raised (pending or suppressed), for live views and tests. */
  onAlert?: (detail: LookoutEventDetail, suppression?: Suppression) => void;
}

/** A time Lookout was not watching at all (dispatch did not tick), ISO from/to. */
export interface Outage {
  from: string;
  to: string;
}

export interface PollRequest {
  source: SourceRef;
  /** When this source was last polled successfully (from dispatch); absent at first sight. */
  previousPollAt?: string;
  /**
   * Set when Lookout was down since this source was last read. Records older than the backfill window
   * stay quiet then (as at first sight) if the outage was longer than the window. A long interval
   * between polls that the request budget chose is not an outage: its failures are alerted.
   */
  outage?: Outage;
}

export interface PollResult {
  source: string;
  ok: boolean;
  requests: number;
  retries: number;
  newRecords: number;
  alerts: number;
  suppressed: number;
  rejected: number;
  /** Deployments: executions still in progress after this poll (dispatch re-reads these soon). */
  inProgress: number;
  /** Services named by new webhook deliveries: the change feed (dispatch reads them next). */
  hotServices: string[];
  gapSuspected: boolean;
  rateLimit?: RateLimitHeaders;
  /** The source had never been stored before: what it found is history, not activity. */
  firstSight: boolean;
  /** Records that could not be stored and were quarantined (absent when none). */
  quarantined?: number;
  error?: { kind: string; status?: number; message: string };
}

/**
 * Conditional puts in flight at once for a burst of new records: each is its own request (a condition
 * cannot ride in BatchWriteItem), so a few in parallel keep a 500-entry cluster run quick.
 */
const INSERT_CONCURRENCY = 16;

export const DEPLOYMENT_PAGE_MIN = 5;
export const DEPLOYMENT_PAGE_MAX = 100;
/**
 * The most deployment entries one poll reads, newest first, whatever the platform answered: a platform
 * that ignores pageSize (docs/platform.md) must not hold a poll past its time with thousands of writes.
 */
export const DEPLOYMENT_READ_MAX = 500;

export async function pollSource(req: PollRequest, deps: PollDeps): Promise<PollResult> {
  const result: PollResult = {
    source: sourceKey(req.source), ok: true, requests: 0, retries: 0, newRecords: 0, alerts: 0, suppressed: 0,
    rejected: 0, inProgress: 0, hotServices: [], gapSuspected: false, firstSight: false,
  };
  const spend = (cost: CallCost) => {
    result.requests += cost.requests;
    result.retries += cost.retries;
    if (cost.rateLimit) result.rateLimit = cost.rateLimit;
  };
  try {
    switch (req.source.kind) {
      case "webhook": await pollWebhook(req, deps, result, spend); break;
      case "cluster": await pollCluster(req, deps, result, spend); break;
      case "deployment": await pollDeployments(req, deps, result, spend); break;
    }
  } catch (err) {
    const e = err as PlatformError;
    if (e.cost) spend(e.cost);
    result.ok = false;
    result.error = { kind: e.kind ?? "internal", status: e.status, message: e.message };
    deps.log.error("poll failed; nothing recorded for this source", { source: result.source, error: e.message, kind: e.kind });
  }
  return result;
}

type Spend = (cost: CallCost) => void;

/**
 * The time before which records of this poll stay quiet: at first sight, and after an outage of Lookout
 * longer than the backfill window, records older than the window are stored but raise no alert.
 */
function backfillCutoff(req: PollRequest, cursor: SourceCursor | undefined, deps: PollDeps): number | undefined {
  const now = deps.now().getTime();
  const longOutage = req.outage && Date.parse(req.outage.to) - Date.parse(req.outage.from) > deps.backfillWindowMs;
  return !cursor || longOutage ? now - deps.backfillWindowMs : undefined;
}

function suppressionFor(occurredAt: string | undefined, cutoff: number | undefined, windowMs: number): Suppression | undefined {
  if (cutoff === undefined || !occurredAt) return undefined;
  // An unreadable or implausible time counts as when Lookout saw it: now, inside the window.
  const t = plausibleInstant(occurredAt)?.ms;
  if (t === undefined || t >= cutoff) return undefined;
  return {
    reason: "backfill",
    detail: `older than the ${formatDuration(windowMs)} backfill window when the source was first seen, or when Lookout resumed after a longer outage`,
  };
}

/**
 * Items that do not match the spec are not stored as records: they stay unseen (a fixed item is read
 * and stored next time), and each is quarantined once with where it breaks the spec, so it is explained
 * (`lookout audit --type quarantine`, one health event) rather than skipped in silence at every poll.
 */
async function setAsideRejected(deps: PollDeps, result: PollResult, rejected: RejectedItem[]) {
  const ref = parseSourceKey(result.source);
  for (const r of rejected) {
    const reason = `does not match the platform's spec at ${redactText(r.jsonPath)}: ${redactText(r.reason)}`;
    const fresh = await setAside(deps.store, {
      stage: "ingest", kind: ref ? RECORD_KIND[ref.kind] : "record", id: `rejected-${contentHash(safeJson(r.raw) ?? `${r.jsonPath}|${r.reason}`)}`,
      source: result.source, organization: ref?.organizationId ?? "unknown", reason, content: r.raw, ...(ref ? { refs: sourceRefs(ref) } : {}),
    }, deps.now());
    if (fresh) {
      result.quarantined = (result.quarantined ?? 0) + 1;
      deps.log.warn("quarantined an item that does not match the spec; it is read again each poll and stored once it does", {
        source: result.source, jsonPath: redactText(r.jsonPath), reason: redactText(r.reason), item: redact(r.raw, knownSecretsOf(r.raw)),
      });
    }
  }
}

const RECORD_KIND = { webhook: "webhook_delivery", cluster: "cluster_log", deployment: "deployment" } as const;

/** JSON of a platform item, or undefined when it cannot be written (nesting deeper than the stack). */
function safeJson(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/** Webhook deliveries and cluster logs: whole lists, immutable items, deduplicated by id or content hash. */
async function pollList<Raw, Rec extends { record_kind: string; id: string; organization_id: string; failed: boolean }>(
  req: PollRequest,
  deps: PollDeps,
  result: PollResult,
  spend: Spend,
  read: () => Promise<{ items: Raw[]; rejected: RejectedItem[]; cost: CallCost }>,
  normalize: (raw: Raw) => Rec,
  occurredAt: (rec: Rec) => string | undefined,
  detail: (rec: Rec, observedAt: string) => LookoutEventDetail,
  afterInsert?: (recs: Rec[]) => Promise<void>,
) {
  const key = result.source;
  const cursor = await deps.store.getCursor(key);
  result.firstSight = !cursor;
  const res = await read();
  spend(res.cost);
  result.rejected = res.rejected.length;
  await setAsideRejected(deps, result, res.rejected);

  const seenBefore = new Set(cursor?.seen ?? []);
  const records = res.items.map((raw) => boundRecord(normalize(raw)));
  const fresh = records.filter((r) => !seenBefore.has(r.id));
  const cutoff = backfillCutoff(req, cursor, deps);
  const observedAt = deps.now().toISOString();
  const inserted: Rec[] = [];
  let passing: unknown;
  // Each record on its own: one that cannot be stored neither stops the others nor the cursor.
  await pMap(fresh, async (rec) => {
    try {
      await insertOne(rec);
    } catch (err) {
      if (!isUnwritable(err)) return void (passing ??= err);
      await quarantineRecord(deps, result, err, {
        kind: rec.record_kind, id: rec.id, organization: rec.organization_id, content: rec, refs: sourceRefs(req.source),
      });
    }
  }, { concurrency: INSERT_CONCURRENCY });
  if (passing) throw passing;
  if (afterInsert && inserted.length) await afterInsert(inserted);

  async function insertOne(rec: Rec) {
    const when = occurredAt(rec);
    let alert;
    if (rec.failed) {
      const d = detail(rec, observedAt);
      const suppression = suppressionFor(when, cutoff, deps.backfillWindowMs);
      alert = newAlertItem(d, observedAt, deps.store.expiresAt(), suppression);
    }
    const outcome = await deps.store.insertRecord(recordItem(rec, when, observedAt), alert);
    if (outcome === "inserted") {
      inserted.push(rec);
      result.newRecords++;
      if (alert) {
        if (alert.suppression) result.suppressed++;
        else result.alerts++;
        deps.onAlert?.(alert.detail, alert.suppression);
      }
    }
  }

  // Seen = what this list holds now and is stored; items that were rejected stay unseen.
  const seen = [...new Set(records.map((r) => r.id))].sort();
  if (!cursor || !sameList(cursor.seen ?? [], seen)) {
    await deps.store.saveCursor(
      { source: key, version: (cursor?.version ?? 0) + 1, seen, first_polled_at: cursor?.first_polled_at ?? observedAt },
      cursor?.version,
    );
  }
}

/** An observation DynamoDB refuses is quarantined (undefined); any other error fails the poll. */
async function quarantineObservation(deps: PollDeps, result: PollResult, err: unknown, obs: DeploymentObservation): Promise<undefined> {
  if (!isUnwritable(err)) throw err;
  await quarantineRecord(deps, result, err, {
    kind: "deployment", id: executionEntryId(obs.service_id, obs.execution_id), organization: obs.organization_id,
    content: obs, refs: { service: { id: obs.service_id } },
  });
  return undefined;
}

/** The audit filters a record of this source can be found by. */
function sourceRefs(src: SourceRef): QuarantineEntry["refs"] {
  if (src.kind === "webhook") return { webhook: { id: src.id } };
  if (src.kind === "cluster") return { cluster: { id: src.id } };
  return { service: { id: src.id } };
}

/** Sets aside a record DynamoDB refuses; a health event says so once (lib/alerts/quarantine.ts). */
async function quarantineRecord(
  deps: PollDeps, result: PollResult, err: unknown,
  thing: Pick<QuarantineEntry, "kind" | "id" | "organization" | "content" | "refs">,
) {
  const e = err as Error;
  const reason = `DynamoDB refused the write: ${e.name}: ${e.message}`;
  await setAside(deps.store, { ...thing, stage: "ingest", source: result.source, reason }, deps.now());
  result.quarantined = (result.quarantined ?? 0) + 1;
  deps.log.error("record quarantined: it cannot be stored; the records beside it were", {
    source: result.source, kind: thing.kind, id: thing.id.slice(0, 200), reason: reason.slice(0, 500),
  });
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

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

async function pollWebhook(req: PollRequest, deps: PollDeps, result: PollResult, spend: Spend) {
  const { organizationId, id } = req.source;
  await pollList(
    req, deps, result, spend,
    () => deps.client.list("listWebhookEvents", { path: { organizationId, webhookId: id } }),
    (e: WebhookEvent) => normalizeWebhookDelivery(e, req.source),
    (r) => r.created_at,
    (r, at) => withOrganizationName(deliveryDetail(r, at), deps.organizationNames),
    async (recs) => {
      // The change feed: these services just started or ended a deployment — read them next.
      const named = recs.flatMap((r) => r.services);
      result.hotServices = [...new Set(named.map((s) => s.id))];
      await deps.store.learnServices(
        named.map((s) => ({
          id: s.id,
          ctx: {
            ...(s.name ? { name: s.name } : {}),
            ...(s.project?.id ? { project: { id: s.project.id, ...(s.project.name ? { name: s.project.name } : {}) } } : {}),
            ...(s.environment?.id
              ? { environment: { id: s.environment.id, ...(s.environment.name ? { name: s.environment.name } : {}), ...(s.environment.type ? { type: s.environment.type } : {}) } }
              : {}),
          },
        })),
      );
    },
  );
}

async function pollCluster(req: PollRequest, deps: PollDeps, result: PollResult, spend: Spend) {
  const { organizationId, id } = req.source;
  const name = deps.clusterNames?.get(id);
  const cluster: NamedRef | undefined = name ? { id, name } : undefined;
  await pollList(
    req, deps, result, spend,
    () => deps.client.list("listClusterLogs", { path: { organizationId, clusterId: id } }),
    (e: ClusterLogEntry) => normalizeClusterLog(e, req.source),
    (r) => r.timestamp,
    (r, at) => withOrganizationName(clusterDetail(r, at, cluster), deps.organizationNames),
  );
}

/**
 * Deployment history has no cursor: read a small page when quiet, and when a page shares nothing with
 * what is known (or an execution being followed fell off it), read again at once with a larger page.
 */
async function pollDeployments(req: PollRequest, deps: PollDeps, result: PollResult, spend: Spend) {
  const key = result.source;
  const applicationId = req.source.id;
  const cursor = await deps.store.getCursor(key);
  result.firstSight = !cursor;
  const known = knownStatuses(cursor);
  let pageSize = cursor?.page_size ?? (cursor ? DEPLOYMENT_PAGE_MIN : 20);
  const observedAt = deps.now().toISOString();
  const nowMs = Date.parse(observedAt);

  let page = await readDeploymentPage(deps, applicationId, pageSize, spend, result, key);
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
    page = await readDeploymentPage(deps, applicationId, pageSize, spend, result, key);
    observations = normalize(page);
  }
  const gap = missing(observations);
  if (gap) {
    result.gapSuspected = true;
    deps.log.warn("deployment history may have a gap: a full page shares nothing with what was known", {
      source: key, pageSize,
    });
  }

  const cutoff = backfillCutoff(req, cursor, deps);
  observations = onePerExecution(observations, nowMs);
  // Oldest first, so a failure is recorded before the success that recovers it. An entry without a
  // usable start is ordered by when Lookout saw it: now (docs/platform.md, "Timestamps").
  const startOf = (o: DeploymentObservation) => entryInstant(o.created_at, o.created_at_raw, nowMs) ?? { ms: nowMs, nanos: 0 };
  observations.sort((a, b) => compareInstants(startOf(a), startOf(b)));
  if (observations.length > DEPLOYMENT_READ_MAX) {
    deps.log.warn("deployment history answered far more than asked: the newest entries were read, the older ones are history", {
      source: key, asked: pageSize, answered: observations.length, read: DEPLOYMENT_READ_MAX,
    });
    observations = observations.slice(-DEPLOYMENT_READ_MAX);
    result.gapSuspected = true;
  }
  const changed = observations.filter((o) => known.get(execKey(o)) !== o.status);
  const contexts = changed.length
    ? await deps.store.getServiceContexts([...new Set(changed.map((o) => o.service_id))])
    : new Map<string, ServiceContext>();

  for (const obs of changed) {
    const ctx: ServiceContext = { ...contexts.get(obs.service_id), ...deps.configured?.get(obs.application_id) };
    const res = await deps.store.observeExecution(obs, observedAt, (prev, svc) => {
      // The nth time this execution entered this status: a re-run that fails again is another alert.
      const occurrence = timesEntered(prev, obs.status) + 1;
      const d = decideDeploymentTransition(prev, obs, svc, deploymentAlertId(obs, occurrence), observedAt);
      if (!d.changed || !d.transition) return { changed: d.changed, service: d.service };
      const detail = withOrganizationName(deploymentDetail({
        obs, transition: d.transition, ctx, observedAt, previousStatus: prev?.status,
        failureCount: d.failureCount, incidentId: d.incidentId, occurrence,
      }), deps.organizationNames);
      const suppression = suppressionFor(obs.updated_at ?? obs.created_at, cutoff, deps.backfillWindowMs);
      const alert = newAlertItem(detail, observedAt, deps.store.expiresAt(), suppression);
      return { changed: true, service: d.service, alert, outcome: alert };
    }, ctx).catch((err: unknown) => quarantineObservation(deps, result, err, obs));
    if (!res) continue; // quarantined: handled, the cursor records its status
    if (res.outcome) {
      if (res.outcome.suppression) result.suppressed++;
      else result.alerts++;
      deps.onAlert?.(res.outcome.detail, res.outcome.suppression);
    }
    if (res.changed) result.newRecords++;
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
}

async function readDeploymentPage(
  deps: PollDeps, applicationId: string, pageSize: number, spend: Spend, result: PollResult, key: string,
): Promise<DeploymentHistoryItem[]> {
  const res = await deps.client.list("listDeploymentHistory", { path: { applicationId }, query: { pageSize } });
  spend(res.cost);
  result.rejected += res.rejected.length;
  await setAsideRejected(deps, result, res.rejected);
  return res.items;
}
