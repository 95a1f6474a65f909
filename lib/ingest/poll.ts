/**
 * One poll of one source: read it, normalize, store what is new (conditional writes), raise alerts into
 * the outbox, remember what was seen. Shared by functions/poll and the local runner.
 *
 * Rules that hold for every source:
 * - Nothing new on the platform → nothing written.
 * - An item that does not match its schema is logged and skipped; it is not marked seen, so it is read
 *   again next time, and the valid items beside it are stored.
 * - A failed read (error, malformed body) changes nothing: no cursor moves past unseen data.
 */
import pMap from "p-map";
import type { PlatformApi, PlatformClient, RejectedItem } from "../platform/client.js";
import type { CallCost, RateLimitHeaders } from "../platform/cost.js";
import type { PlatformError } from "../platform/errors.js";
import type { ClusterLogEntry, DeploymentHistoryItem, WebhookEvent } from "../platform/schemas.js";
import type { LookoutEventDetail, NamedRef } from "../alerts/event.js";
import {
  type ServiceContext,
  clusterDetail,
  deliveryDetail,
  deploymentAlertId,
  deploymentDetail,
} from "../alerts/build.js";
import { type Suppression, newAlertItem, recordItem } from "../store/items.js";
import type { IngestStore, SourceCursor } from "../store/ingest-store.js";
import {
  type DeploymentObservation,
  type SourceRef,
  normalizeClusterLog,
  normalizeDeployment,
  normalizeWebhookDelivery,
  sourceKey,
} from "./normalize.js";
import { decideDeploymentTransition } from "./transitions.js";
import { classifyStatus } from "./status.js";
import { knownSecretsOf, redact, redactText } from "./redact.js";
import { formatDuration } from "../config/duration.js";

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
  error?: { kind: string; status?: number; message: string };
}

/**
 * Conditional puts in flight at once for a burst of new records: each is its own request (a condition
 * cannot ride in BatchWriteItem), so a few in parallel keep a 500-entry cluster run quick.
 */
const INSERT_CONCURRENCY = 16;

export const DEPLOYMENT_PAGE_MIN = 5;
export const DEPLOYMENT_PAGE_MAX = 100;

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
  const t = Date.parse(occurredAt);
  if (Number.isNaN(t) || t >= cutoff) return undefined;
  return {
    reason: "backfill",
    detail: `older than the ${formatDuration(windowMs)} backfill window when the source was first seen, or when Lookout resumed after a longer outage`,
  };
}

function logRejected(deps: PollDeps, source: string, rejected: RejectedItem[]) {
  for (const r of rejected) {
    deps.log.warn("skipped an item that does not match the spec; it will be read again", {
      source, jsonPath: redactText(r.jsonPath), reason: redactText(r.reason), item: redact(r.raw, knownSecretsOf(r.raw)),
    });
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
  logRejected(deps, key, res.rejected);

  const seenBefore = new Set(cursor?.seen ?? []);
  const records = res.items.map(normalize);
  const fresh = records.filter((r) => !seenBefore.has(r.id));
  const cutoff = backfillCutoff(req, cursor, deps);
  const observedAt = deps.now().toISOString();
  const inserted: Rec[] = [];
  await pMap(fresh, async (rec) => {
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
  }, { concurrency: INSERT_CONCURRENCY });
  if (afterInsert && inserted.length) await afterInsert(inserted);

  // Seen = what this list holds now and is stored; items that were rejected stay unseen.
  const seen = [...new Set(records.map((r) => r.id))].sort();
  if (!cursor || !sameList(cursor.seen ?? [], seen)) {
    await deps.store.saveCursor(
      { source: key, version: (cursor?.version ?? 0) + 1, seen, first_polled_at: cursor?.first_polled_at ?? observedAt },
      cursor?.version,
    );
  }
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);

/** Same executions with the same statuses, whatever the order (entries can share a timestamp). */
function sameStatuses(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

async function pollWebhook(req: PollRequest, deps: PollDeps, result: PollResult, spend: Spend) {
  const { organizationId, id } = req.source;
  await pollList(
    req, deps, result, spend,
    () => deps.client.list("listWebhookEvents", { path: { organizationId, webhookId: id } }),
    (e: WebhookEvent) => normalizeWebhookDelivery(e, req.source),
    (r) => r.created_at,
    deliveryDetail,
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
    (r, at) => clusterDetail(r, at, cluster),
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
  const known = cursor?.executions ?? {};
  let pageSize = cursor?.page_size ?? (cursor ? DEPLOYMENT_PAGE_MIN : 20);

  let page = await readDeploymentPage(deps, applicationId, pageSize, spend, result, key);
  let observations = page.map((item) => normalizeDeployment(item, req.source));
  const followed = Object.entries(known).filter(([, status]) => classifyStatus(status) === "in_progress").map(([id]) => id);
  const onPage = (obs: DeploymentObservation[]) => new Set(obs.map((o) => o.execution_id));
  const missing = (obs: DeploymentObservation[]) => {
    const ids = onPage(obs);
    const overlap = Object.keys(known).some((id) => ids.has(id));
    const lostFollowed = followed.some((id) => !ids.has(id));
    return Object.keys(known).length > 0 && obs.length >= pageSize && (!overlap || lostFollowed);
  };
  if (missing(observations) && pageSize < DEPLOYMENT_PAGE_MAX) {
    pageSize = DEPLOYMENT_PAGE_MAX;
    page = await readDeploymentPage(deps, applicationId, pageSize, spend, result, key);
    observations = page.map((item) => normalizeDeployment(item, req.source));
  }
  const gap = missing(observations);
  if (gap) {
    result.gapSuspected = true;
    deps.log.warn("deployment history may have a gap: a full page shares nothing with what was known", {
      source: key, pageSize,
    });
  }

  const cutoff = backfillCutoff(req, cursor, deps);
  const observedAt = deps.now().toISOString();
  // Oldest first, so a failure is recorded before the success that recovers it.
  observations.sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""));
  const changed = observations.filter((o) => known[o.execution_id] !== o.status);
  const contexts = changed.length
    ? await deps.store.getServiceContexts([...new Set(changed.map((o) => o.service_id))])
    : new Map<string, ServiceContext>();

  for (const obs of changed) {
    const ctx: ServiceContext = { ...contexts.get(obs.service_id), ...deps.configured?.get(obs.application_id) };
    const alertId = deploymentAlertId(obs);
    const res = await deps.store.observeExecution(obs, observedAt, (prev, svc) => {
      const d = decideDeploymentTransition(prev, obs, svc, alertId);
      if (!d.changed || !d.transition) return { changed: d.changed, service: d.service };
      const detail = deploymentDetail({
        obs, transition: d.transition, ctx, observedAt, previousStatus: prev?.status,
        failureCount: d.failureCount, incidentId: d.incidentId,
      });
      const suppression = suppressionFor(obs.updated_at ?? obs.created_at, cutoff, deps.backfillWindowMs);
      const alert = newAlertItem(detail, observedAt, deps.store.expiresAt(), suppression);
      return { changed: true, service: d.service, alert, outcome: alert };
    }, ctx);
    if (res.outcome) {
      if (res.outcome.suppression) result.suppressed++;
      else result.alerts++;
      deps.onAlert?.(res.outcome.detail, res.outcome.suppression);
    }
    if (res.changed) result.newRecords++;
  }

  const executions = Object.fromEntries(observations.map((o) => [o.execution_id, o.status]));
  result.inProgress = observations.filter((o) => classifyStatus(o.status) === "in_progress").length;
  // Quiet (the page overlapped and nothing is in progress): back to the small page at once. A burst
  // larger than it is caught by the overlap check above, at the cost of one more request.
  const nextSize = gap || result.inProgress > 0 ? pageSize : DEPLOYMENT_PAGE_MIN;
  const next: SourceCursor = {
    source: key,
    version: (cursor?.version ?? 0) + 1,
    executions,
    page_size: nextSize,
    ...(gap ? { gap_suspected_at: observedAt } : cursor?.gap_suspected_at ? { gap_suspected_at: cursor.gap_suspected_at } : {}),
    first_polled_at: cursor?.first_polled_at ?? observedAt,
  };
  if (!cursor || !sameStatuses(cursor.executions ?? {}, executions) || cursor.page_size !== nextSize || gap) {
    await deps.store.saveCursor(next, cursor?.version);
  }
}

async function readDeploymentPage(
  deps: PollDeps, applicationId: string, pageSize: number, spend: Spend, result: PollResult, key: string,
): Promise<DeploymentHistoryItem[]> {
  const res = await deps.client.list("listDeploymentHistory", { path: { applicationId }, query: { pageSize } });
  spend(res.cost);
  result.rejected += res.rejected.length;
  logRejected(deps, key, res.rejected);
  return res.items;
}
