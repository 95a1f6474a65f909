/**
 * The core of reading a whole list of immutable items (webhook deliveries, cluster logs): deduplicated
 * by id or content hash against what the cursor has seen (lib/poll/seen.ts); new records without an
 * alert stored in batches, each with an alert stored on its own, with its alert, once. A flood is
 * stored in chunks, oldest first, the cursor saved after each, as many as the poll has time for; the
 * rest is the next poll's (docs/limits.md, "A flood of records").
 */
import type { CallCost } from "../../platform/cost.js";
import pMap from "p-map";
import type { PlatformListResponse } from "../../platform/client.js";
import type { LookoutEventDetail } from "../../model/event.js";
import { newAlertItem } from "../../alerts/outbox-item.js";
import { recordItem } from "../../model/items.js";
import type { AlertItem } from "../../model/alert-item.js";
import { type RecordItem, type SourceCursor, recordUnwritable } from "../../model/ingest-store.js";
import { boundRecord } from "../../model/bounds.js";
import { type Instant, instantOr, parseTimestamp, plausibleInstant } from "../../model/time.js";
import { LOST_RACE, retryLostRaces } from "../../store/optimistic.js";
import { type ClosingIncident, withIncident } from "../../alerts/build.js";
import { emptyIncidentState, type IncidentState } from "../../model/transitions.js";
import { type FoldOptions, type IncidentFold, type IncidentRecord, type QuietClose, byOccurrence, foldIncident } from "../incidents.js";
import { addSeen, hasSeen, listDigest, loadSeen, seenId } from "../seen.js";
import {
  type PollContext,
  backfillCutoff,
  countAlert,
  namingSource,
  quarantineRecord,
  sourceRefs,
  suppressionFor,
  takeRejected,
} from "./reader.js";

/**
 * Conditional puts in flight at once for a burst of new records with alerts: each is its own request
 * (a condition cannot ride in BatchWriteItem), so a few in parallel keep a burst of failures quick.
 */
const INSERT_CONCURRENCY = 16;

/** What a record of a list needs to be stored and alerted on. */
export interface ListRecord {
  record_kind: string;
  id: string;
  organization_id: string;
  failed: boolean;
}

export interface ListReading<Raw, Rec extends ListRecord> {
  /** Reads the whole list from the platform. */
  read: () => Promise<Pick<PlatformListResponse<Raw>, "items" | "rejected" | "cost">>;
  normalize: (raw: Raw) => Rec;
  /** When the record happened by the platform's clock, if it says. */
  occurredAt: (rec: Rec) => string | undefined;
  /** The alert a failed record raises. */
  detail: (rec: Rec, observedAt: string) => LookoutEventDetail;
  /** Told of the records this poll stored, when there are any. */
  afterInsert?: (recs: Rec[]) => Promise<void>;
  /** The source's incidents (lib/poll/incidents.ts): webhook targets, a cluster. */
  incidents?: IncidentReading<Rec>;
}

/** How a list's records open, join and close incidents, and the alerts that close them. */
export interface IncidentReading<Rec> {
  subject: (rec: Rec) => string;
  /** Subjects folded at every poll, fresh records or not: a cluster, for its quiet period. */
  always?: string[];
  /** A failure, a success that closes, or neither. */
  outcome: (rec: Rec) => IncidentRecord["outcome"];
  /** A failure's status and error: the same as the previous failure's is a repeat. */
  signature: (rec: Rec) => string;
  /** A success: what ended the incident, for people. */
  resolvedBy: (rec: Rec) => string;
  /** Clusters: no failure for this long closes the incident. */
  quietMs?: number;
  /** The alert of a success that closes an incident. */
  closing: (rec: Rec, close: ClosingIncident & { closed_at: string }, observedAt: string) => LookoutEventDetail;
  /** The alert of an incident its quiet period closed. */
  quiet?: (subject: string, close: QuietClose, observedAt: string) => LookoutEventDetail;
}

export async function readList<Raw, Rec extends ListRecord>(poll: PollContext, reading: ListReading<Raw, Rec>): Promise<void> {
  const { req, deps, result } = poll;
  const started = performance.now();
  const key = result.source;
  // The cursor and the list are independent reads, made together: one round trip less on every poll.
  // The list's requests are counted whichever fails (a failed read carries its cost: lib/poll/poll.ts).
  const [cursorRead, listRead] = await Promise.allSettled([deps.store.getCursor(key), reading.read()]);
  if (listRead.status === "fulfilled") poll.spend(listRead.value.cost);
  if (cursorRead.status === "rejected") {
    const failedReadCost = listRead.status === "rejected" ? (listRead.reason as { cost?: CallCost }).cost : undefined;
    if (failedReadCost) poll.spend(failedReadCost);
    throw cursorRead.reason;
  }
  if (listRead.status === "rejected") throw listRead.reason;
  let cursor = cursorRead.value;
  const res = listRead.value;
  result.firstSight = !cursor;
  await takeRejected(poll, res.rejected);

  // Each id once: as first listed, unless a later copy is a failure and the first is not (an id listed
  // twice with other contents must not hide a failure, whichever order it came in). Rejected items stay unseen.
  const byId = new Map<string, Rec>();
  const failure = (rec: Rec) => reading.incidents?.outcome(rec) === "failure";
  for (const raw of res.items) {
    const rec = boundRecord(reading.normalize(raw));
    const first = byId.get(rec.id);
    if (!first || (failure(rec) && !failure(first))) byId.set(rec.id, rec);
  }
  const records = [...byId.values()];
  const listed = new Set(records.map((r) => seenId(r.id)));
  const digest = listDigest(listed);
  const observedAt = deps.now().toISOString();
  // The same list as when all of it was stored: nothing to read or write but a cluster's quiet period.
  if (cursor?.listed === digest) return void (await storeChunk(poll, reading, [], { observedAt, cutoff: undefined, more: false }));

  let seen = await loadSeen(deps.store, cursor);
  if (seen.missing.length) deps.log.warn("seen ids of this source are gone; their records are stored again, those past the backfill window quietly", { source: key, parts: seen.missing.length });
  const isSeen = hasSeen(seen);
  const fresh = inOccurrenceOrder(records.filter((r) => !isSeen(seenId(r.id))), reading.occurredAt, observedAt);
  const cutoff = laterOf(backfillCutoff(poll, cursor), cursor?.quiet_before, seen.missing.length ? deps.now().getTime() - deps.backfillWindowMs : undefined);
  const workMs = deps.bounds?.pollWorkMs ?? POLL_WORK_MS;
  const chunkSize = deps.bounds?.chunkRecords ?? CHUNK_RECORDS;
  let done = 0;
  // Chunk after chunk while the poll has time; at least one, so that every poll moves on. The cursor
  // names a chunk's ids only once it is stored: never an id past what is stored.
  do {
    const chunk = fresh.slice(done, done + chunkSize);
    const more = done + chunk.length < fresh.length;
    await storeChunk(poll, reading, chunk, { observedAt, cutoff, more });
    const change = addSeen(seen, chunk.map((r) => seenId(r.id)), listed);
    const next: SourceCursor = {
      source: key, version: (cursor?.version ?? 0) + 1, first_polled_at: cursor?.first_polled_at ?? observedAt,
      ...(change.seen.inline.length ? { seen: change.seen.inline } : {}),
      ...(change.seen.parts.length ? { seen_parts: change.seen.parts.map((p) => p.part) } : {}),
      ...(more ? (cutoff !== undefined ? { quiet_before: new Date(cutoff).toISOString() } : {}) : { listed: digest }),
    };
    if (change.put.length) await deps.store.putSeenParts(key, change.put);
    // A racing poller saved first: it goes on from its own cursor; what this one stored is read again, harmlessly.
    if (!(await deps.store.saveCursor(next, cursor?.version))) break;
    if (change.dropped.length) {
      await deps.store.deleteSeenParts(key, change.dropped).catch((err: unknown) =>
        deps.log.warn("could not delete seen parts no longer named; they expire with the retention", { source: key, error: (err as Error).message }));
    }
    [cursor, seen, done] = [next, change.seen, done + chunk.length];
  } while (done < fresh.length && performance.now() - started < workMs);
  if (done < fresh.length) result.backlog = fresh.length - done;
}

/** Fresh records stored at a time: what a poll holds beyond the answer is a chunk's items and alerts. */
export const CHUNK_RECORDS = 1_000;
/** A poll starts no chunk after this long: the poll function's timeout is 60 s (docs/limits.md). */
export const POLL_WORK_MS = 30_000;

/** Records in the order their incidents fold them (occurred instant, then id): a chunk never skips ahead of the next. */
function inOccurrenceOrder<Rec extends ListRecord>(recs: Rec[], occurredAt: (r: Rec) => string | undefined, observedAt: string): Rec[] {
  const seenMs = parseTimestamp(observedAt)!.ms;
  return recs
    .map((rec) => ({ rec, id: rec.id, at: occurrence(occurredAt(rec), seenMs) }))
    .sort(byOccurrence)
    .map((r) => r.rec);
}

/** When a record happened for its incident: an unusable time counts as when Lookout saw it. */
const occurrence = (when: string | undefined, seenMs: number): Instant => plausibleInstant(when, seenMs) ?? { ms: seenMs, nanos: 0 };

/** The latest of the times before which records stay quiet (epoch ms), if any. */
function laterOf(...cutoffs: Array<number | string | undefined>): number | undefined {
  const ms = cutoffs.filter((c) => c !== undefined).map((c) => (typeof c === "string" ? Date.parse(c) : c));
  return ms.length ? Math.max(...ms) : undefined;
}

/**
 * Stores one chunk of fresh records: each failure with its alert, once; incidents folded and saved.
 * `more`: records of the answer wait for a later chunk, so the quiet period at the poll waits too.
 */
async function storeChunk<Raw, Rec extends ListRecord>(
  poll: PollContext, reading: ListReading<Raw, Rec>, fresh: Rec[], at: { observedAt: string; cutoff: number | undefined; more: boolean },
): Promise<void> {
  const { req, deps, result } = poll;
  const { observedAt, cutoff } = at;
  const failureDetails = new Map(fresh.filter((r) => r.failed).map((r) => [r.id, reading.detail(r, observedAt)]));
  const incidents = reading.incidents && (await foldIncidents(poll, reading, reading.incidents, fresh, failureDetails, observedAt, cutoff, at.more));
  const inserted: Rec[] = [];
  let passing: unknown;
  const writes = fresh.map((rec) => toWrite(rec));
  // A record with no alert is written in batches (rewriting one stored already changes nothing: it is
  // immutable, keyed by its id); one with an alert — a failure, or a success that closes an incident —
  // conditionally with it, once.
  const batched = writes.filter((w) => !w.alert);
  const conditional = writes.filter((w) => w.alert);
  // Each record on its own: one that cannot be stored neither stops the others nor the cursor. The
  // conditional writes first, then the batches: on DynamoDB Local, transactions beside batch writes
  // slowed both (a 500-entry cluster run at about 520 records/s together, 950 one after the other).
  await pMap(conditional, async (w) => {
    try {
      if ((await deps.store.insertRecord(w.item, w.alert)) === "exists") return;
      stored(w.rec);
      if (w.alert) countAlert(poll, w.alert);
    } catch (err) {
      await refused(w.rec, err, w.alert);
    }
  }, { concurrency: INSERT_CONCURRENCY });
  if (batched.length) {
    // A batch put cannot tell a new record from one stored already: each written counts as new (a
    // record rewritten after a crash before the cursor was saved, or by a racing poller, counts again).
    const refusals = new Map((await deps.store.insertRecords(batched.map((w) => w.item))).map((r) => [r.record.pk, r.error]));
    await pMap(batched, (w) => (refusals.has(w.item.pk) ? refused(w.rec, refusals.get(w.item.pk)) : stored(w.rec)), { concurrency: INSERT_CONCURRENCY });
  }
  if (passing) throw passing;
  // The incidents' states before the cursor: a crash in between re-reads the records and decides the same.
  if (incidents) for (const fold of incidents.values()) await settleIncident(poll, fold, observedAt);
  if (reading.afterInsert && inserted.length) await reading.afterInsert(inserted);

  /** The record's item and the alert that rides with it, if any. */
  function toWrite(rec: Rec): { rec: Rec; item: RecordItem; alert?: AlertItem } {
    const when = reading.occurredAt(rec);
    const decision = incidents?.get(reading.incidents!.subject(rec))?.fold.decisions.get(rec.id);
    let d = failureDetails.get(rec.id);
    if (d && decision && decision.role !== "closes") d = withIncident(d, decision.incident_id, decision.incident);
    // A success that closes an incident carries the closing alert, in the same conditional write.
    const closes = !d && decision?.role === "closes" && !decision.history;
    if (closes) d = reading.incidents!.closing(rec, decision, observedAt);
    // The close of an incident people were told of is never backfill: the message they saw turns resolved.
    const alert = d && newAlertItem(d, observedAt, deps.store.expiresAt(), closes ? undefined : suppressionFor(when, cutoff, deps.backfillWindowMs));
    return { rec, item: recordItem(rec, when, observedAt), ...(alert ? { alert: namingSource(alert, rec.id) } : {}) };
  }

  function stored(rec: Rec) {
    inserted.push(rec);
    result.newRecords++;
  }

  /**
   * A record not stored: set aside when the store refuses it for what it is (RecordUnwritable); any other
   * error fails the poll, after the others. The alert it carried (a failure, or the close of an incident,
   * already folded into the incident's state) is raised alone: a record refused must not take its alert with it.
   */
  async function refused(rec: Rec, err: unknown, alert?: AlertItem) {
    const refusal = recordUnwritable(err);
    if (!refusal) return void (passing ??= err);
    // Setting it aside can fail too (throttling): the poll fails after the others were tried.
    await quarantineRecord(poll, refusal, {
      kind: rec.record_kind, id: rec.id, organization: rec.organization_id, content: rec, refs: sourceRefs(req.source),
    }).catch((qErr: unknown) => void (passing ??= qErr));
    if (alert) {
      await deps.store.raiseAlert(alert)
        .then((raised) => void (raised && countAlert(poll, alert)))
        .catch((aErr: unknown) => void (passing ??= aErr));
    }
  }
}

/** A subject's incident as this poll folds it: the state read, its fresh records, the fold. */
interface SubjectFold {
  subject: string;
  stored: IncidentState | undefined;
  records: IncidentRecord[];
  fold: IncidentFold;
  opts: FoldOptions;
  quiet?: IncidentReading<never>["quiet"];
}

/** Reads each subject's incident state and folds the fresh records into it (decisions only; nothing written). */
async function foldIncidents<Raw, Rec extends ListRecord>(
  { deps }: PollContext, reading: ListReading<Raw, Rec>, inc: IncidentReading<Rec>, fresh: Rec[],
  failureDetails: Map<string, LookoutEventDetail>, observedAt: string, cutoff: number | undefined, more: boolean,
): Promise<Map<string, SubjectFold>> {
  const seenMs = parseTimestamp(observedAt)!.ms;
  const bySubject = new Map<string, IncidentRecord[]>((inc.always ?? []).map((s) => [s, []]));
  for (const rec of fresh) {
    const when = reading.occurredAt(rec);
    const d = failureDetails.get(rec.id);
    const r: IncidentRecord = {
      id: rec.id,
      at: occurrence(when, seenMs),
      occurredAt: instantOr(when, observedAt),
      outcome: inc.outcome(rec),
      ...(d
        ? { alertId: d.id, signature: inc.signature(rec), refs: compactRefs(d), ...(suppressionFor(when, cutoff, deps.backfillWindowMs) ? { history: true } : {}) }
        : { resolvedBy: inc.resolvedBy(rec) }),
    };
    const subject = inc.subject(rec);
    const list = bySubject.get(subject);
    if (list) list.push(r);
    else bySubject.set(subject, [r]);
  }
  const out = new Map<string, SubjectFold>();
  for (const [subject, records] of bySubject) {
    const stored = await deps.store.getIncident(subject);
    const opts = { quietMs: inc.quietMs, nowMs: seenMs, ...(more ? { more } : {}) };
    out.set(subject, { subject, stored, records, fold: foldIncident(stored ?? emptyIncidentState(subject), records, opts), opts, quiet: inc.quiet });
  }
  return out;
}

const compactRefs = ({ project, environment, service }: LookoutEventDetail) =>
  ({ ...(project ? { project } : {}), ...(environment ? { environment } : {}), ...(service ? { service } : {}) });

/**
 * Raises the quiet closes and saves the subject's state on the version read. A racing poller saved
 * first: read its state, fold again (records it folded are at or before its watermark) and save that.
 */
async function settleIncident(poll: PollContext, sf: SubjectFold, observedAt: string): Promise<void> {
  const { deps } = poll;
  let { stored, fold } = sf;
  await retryLostRaces({ attempts: 8, what: `incident ${sf.subject}` }, async (n) => {
    if (n > 0) {
      stored = await deps.store.getIncident(sf.subject);
      fold = foldIncident(stored ?? emptyIncidentState(sf.subject), sf.records, sf.opts);
    }
    for (const q of fold.quietCloses) {
      if (!sf.quiet || q.history) continue;
      // Not all history: people were told of it, so its close is news however long ago it came.
      const alert = newAlertItem(sf.quiet(sf.subject, q, observedAt), observedAt, deps.store.expiresAt());
      if (await deps.store.raiseAlert(alert)) countAlert(poll, alert);
    }
    if (!fold.changed) return true;
    const next = { ...fold.state, version: (stored?.version ?? 0) + 1 };
    return (await deps.store.saveIncident(next, stored?.version)) ? true : LOST_RACE;
  });
}

