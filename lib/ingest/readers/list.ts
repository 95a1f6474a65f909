/**
 * The core of reading a whole list of immutable items (webhook deliveries, cluster logs): deduplicated
 * by id or content hash against the cursor's `seen`, each new record stored on its own with its alert.
 */
import pMap from "p-map";
import type { PlatformListResponse } from "../../platform/client.js";
import type { LookoutEventDetail } from "../../model/event.js";
import { newAlertItem } from "../../alerts/outbox-item.js";
import { recordItem } from "../../model/items.js";
import { boundRecord } from "../../model/bounds.js";
import { isUnwritable } from "../../store/quarantine.js";
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
 * Conditional puts in flight at once for a burst of new records: each is its own request (a condition
 * cannot ride in BatchWriteItem), so a few in parallel keep a 500-entry cluster run quick.
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
}

export async function readList<Raw, Rec extends ListRecord>(poll: PollContext, reading: ListReading<Raw, Rec>): Promise<void> {
  const { req, deps, result } = poll;
  const key = result.source;
  const cursor = await deps.store.getCursor(key);
  result.firstSight = !cursor;
  const res = await reading.read();
  poll.spend(res.cost);
  await takeRejected(poll, res.rejected);

  const seenBefore = new Set(cursor?.seen ?? []);
  const records = res.items.map((raw) => boundRecord(reading.normalize(raw)));
  const fresh = records.filter((r) => !seenBefore.has(r.id));
  const cutoff = backfillCutoff(poll, cursor);
  const observedAt = deps.now().toISOString();
  const inserted: Rec[] = [];
  let passing: unknown;
  // Each record on its own: one that cannot be stored neither stops the others nor the cursor.
  await pMap(fresh, async (rec) => {
    try {
      await insertOne(rec);
    } catch (err) {
      if (!isUnwritable(err)) return void (passing ??= err);
      // Setting it aside can fail too (throttling): the poll fails after the others were tried.
      await quarantineRecord(poll, err, {
        kind: rec.record_kind, id: rec.id, organization: rec.organization_id, content: rec, refs: sourceRefs(req.source),
      }).catch((qErr: unknown) => void (passing ??= qErr));
    }
  }, { concurrency: INSERT_CONCURRENCY });
  if (passing) throw passing;
  if (reading.afterInsert && inserted.length) await reading.afterInsert(inserted);

  async function insertOne(rec: Rec) {
    const when = reading.occurredAt(rec);
    let alert;
    if (rec.failed) {
      const d = reading.detail(rec, observedAt);
      const suppression = suppressionFor(when, cutoff, deps.backfillWindowMs);
      alert = newAlertItem(d, observedAt, deps.store.expiresAt(), suppression);
    }
    const outcome = await deps.store.insertRecord(recordItem(rec, when, observedAt), alert && namingSource(alert, rec.id));
    if (outcome === "inserted") {
      inserted.push(rec);
      result.newRecords++;
      if (alert) countAlert(poll, alert);
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

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i]);
