/**
 * The audit trail: queries through the audit indexes (an index read, never a Scan) and `explain` by
 * key, a page's rows and batches by key, all through the AuditItems port (lib/model/audit-items.ts;
 * on DynamoDB: lib/store/audit-store.ts).
 */
import type { LookoutEventDetail } from "../model/event.js";
import pMap from "p-map";
import { itemKeyString, keys } from "../model/items.js";
import { AUDIT_SORT, auditRowOf, instantOf } from "../model/audit-index.js";
import type { AuditItems, ItemKey } from "../model/audit-items.js";
import type { Mute } from "../model/notify-store.js";
import type { AuditPage, AuditQuery, IndexPosition } from "./model.js";
import type { AuditRow, DeliveryRow } from "../model/audit-row.js";
import { keyCondition, planQuery, type Plan } from "./query-plan.js";
import { readMerged, streamsOf, type Item, type QueryFn } from "./merge.js";
import { encodeCursor } from "./cursor.js";
import { BATCH_SPAN_MS, batchRecords, isBatchKey } from "../store/routine-batches.js";
import { parseExecutionEntryId } from "../model/audit-row.js";
import {
  type DeliveryFacts,
  type Explanation,
  type StoredItem,
  alertIdsOf,
  alertSourceId,
  explainAlert,
  explainQuarantine,
  explainSubject,
} from "./explain.js";
import type { IncidentActionRecord } from "../model/notify-store.js";

/** What the CLI and the API need of the audit trail. */
export interface AuditReader {
  query(q: AuditQuery, opts?: { deliveries?: boolean }): Promise<AuditPage>;
  /** Undefined when no record, execution or alert has this id. */
  explain(id: string): Promise<Explanation | undefined>;
}

const JOIN_CONCURRENCY = 8;

export class AuditTrail implements AuditReader {
  constructor(private readonly items: AuditItems) {}

  async query(q: AuditQuery, opts: { deliveries?: boolean } = {}): Promise<AuditPage> {
    const plan = planQuery(q);
    // One more than a page: when it exists there is a next page, and the cursor is not a dead end.
    const streams = streamsOf(plan);
    const items = await readMerged(streams, { lo: plan.lo, hi: plan.hi }, this.streamQuery(plan, streams.length), q.limit + 1);
    const page = items.slice(0, q.limit);
    const rows = await this.rowsOf(page);
    if (opts.deliveries ?? true) await this.joinDeliveries(rows);
    const last = page[page.length - 1];
    return {
      rows,
      ...(items.length > q.limit && last ? { cursor: encodeCursor(q.identity, positionOf(last), q.range) } : {}),
      plan: {
        index: plan.index, partitions: plan.partitions, ...(plan.filter ? { filter: plan.filter.expression } : {}),
        ...(plan.batches ? { batches: { index: plan.batches.index, partitions: plan.batches.partitions, filter: plan.batches.filter.expression } } : {}),
      },
    };
  }

  private streamQuery(plan: Plan, streams: number): QueryFn {
    // A batch sorts by its newest row: one holding rows below `hi` may sort up to its span above it.
    const widened = { lo: plan.lo, ...(plan.hi !== undefined ? { hi: laterBy(plan.hi, BATCH_SPAN_MS) } : {}) };
    return async (stream, start, limit) => {
      const key = keyCondition({ ...widened, keyAttr: stream.keyAttr }, stream.partition);
      const res = await this.items.queryIndex({ index: stream.index, key, ...(stream.filter ? { filter: stream.filter } : {}), limit, ...(start ? { start } : {}) });
      const entries = res.items;
      // One partition's first read is at most a page (limit + 1 entries, all of which the merge may take):
      // its rows come with its batches, in one round trip. Later reads (a sparse filter doubles up to
      // 1,000) and merged partitions read past what a page takes: their rows wait for the page (rowsOf).
      const eager = streams === 1 && start === undefined;
      const withRows = (e: Item) => isBatchKey(e.pk) || (eager && !auditRowOf(e));
      const found = await this.batchGet(entries.filter(withRows));
      const items = entries.flatMap((e): Item[] => {
        if (!withRows(e)) return [e];
        const item = found.get(itemKeyString(e));
        if (!item) return [];
        return isBatchKey(e.pk) ? batchRecords(item) : [{ ...e, ...item }];
      });
      return { items, ...(res.last ? { last: res.last } : {}) };
    };
  }

  /**
   * The rows of a page. An index entry carries keys and filtered fields, not its row (docs/audit.md,
   * "Lean index entries"): the page's items are read together, once the merge has chosen them, so the
   * entries a merge reads past are never fetched. An older item's entry (and a batched record) carries
   * its row. An item gone since (its retention) is left out.
   */
  private async rowsOf(page: Item[]): Promise<AuditRow[]> {
    const found = await this.batchGet(page.filter((e) => !auditRowOf(e)));
    return page.flatMap((e) => {
      const row = auditRowOf(e) ?? auditRowOf(found.get(itemKeyString(e)) ?? {});
      return row ? [row] : [];
    });
  }

  /** The items of these keys (or of the items these entries name) that exist, by key, read together. */
  private batchGet(keyList: Array<Record<string, unknown>>): Promise<Map<string, Item>> {
    return this.items.rowItems(keyList.map((k) => ({ pk: String(k.pk), sk: String(k.sk) })));
  }

  /** Who was told about each alert row: its delivery records (one Query per alert, by key). */
  private async joinDeliveries(rows: AuditRow[]): Promise<void> {
    await pMap(rows.filter((r) => r.type === "alert"), async (row) => {
      row.deliveries = (await this.deliveries(row.id)).map(deliveryRow);
    }, { concurrency: JOIN_CONCURRENCY });
  }

  private deliveries(alertId: string): Promise<StoredItem[]> {
    return this.items.partition(keys.deliveries(alertId).pk);
  }

  async explain(id: string): Promise<Explanation | undefined> {
    const exec = parseExecutionEntryId(id);
    const candidates: ItemKey[] = [
      keys.alert(id),
      keys.record("webhook_delivery", id),
      keys.record("cluster_log", id),
      ...(exec ? [keys.execution(exec.serviceId, exec.executionId)] : []),
      keys.quarantine(id, "ingest"),
      keys.quarantine(id, "publish"),
    ];
    const all = await this.resolvePointers(await this.getMany(candidates));
    const quarantined = all.filter((i) => i.item_type === "quarantine");
    const found = all.filter((i) => i.item_type !== "quarantine");
    const asked = found.find((i) => i.item_type === "alert") ?? found[0];
    if (!asked && !quarantined.length) return undefined;

    // The subject is what raised the alerts: the record or execution asked about, or the asked alert's source.
    let subject: StoredItem | undefined = asked?.item_type === "alert" ? undefined : asked;
    if (!subject && asked) {
      const source = alertSourceId(asked);
      const sourceExec = source ? parseExecutionEntryId(source) : undefined;
      if (sourceExec) subject = await this.items.get(keys.execution(sourceExec.serviceId, sourceExec.executionId));
      else if (source) subject = (await this.resolvePointers(await this.getMany([keys.record("webhook_delivery", source), keys.record("cluster_log", source)])))[0];
    }
    const alertIds = new Set(subject ? alertIdsOf(subject) : []);
    if (asked?.item_type === "alert") alertIds.add(String(asked.alert_id));
    for (const q of quarantined) if (q.health_alert_id) alertIds.add(String(q.health_alert_id));
    const alerts = (await this.getMany([...alertIds].map((a) => keys.alert(a))))
      .sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)));
    const incidents = [...new Set(alerts.map((a) => (a.detail as LookoutEventDetail | undefined)?.incident_id).filter((i): i is string => !!i))];
    const actions = (await pMap(incidents, (i) => this.items.partition(keys.actions(i).pk), { concurrency: JOIN_CONCURRENCY })).flat() as unknown as IncidentActionRecord[];
    actions.sort((a, b) => String(a.at).localeCompare(String(b.at)));
    const explained = await pMap(alerts, async (alert) => {
      const [facts, escalations] = await Promise.all([this.deliveryFacts(String(alert.alert_id)), this.escalationsBy(alert)]);
      return explainAlert(alert, facts, escalations, actions);
    }, { concurrency: JOIN_CONCURRENCY });
    const explainedSubject = subject ? explainSubject(subject) : undefined;
    return {
      id, ...(explainedSubject ? { subject: explainedSubject } : {}),
      ...(quarantined.length ? { quarantined: quarantined.map(explainQuarantine) } : {}), alerts: explained,
    };
  }

  /** The escalations an alert scheduled (docs/actions.md, "Escalation"): its incident's, by the routes that delivered this alert first. */
  private async escalationsBy(alert: StoredItem): Promise<StoredItem[]> {
    const incident = (alert.detail as LookoutEventDetail | undefined)?.incident_id;
    if (!incident) return [];
    return (await this.items.partition(keys.escalations(incident).pk)).filter((e) => e.alert_id === alert.alert_id);
  }

  /** An alert's deliveries with the mute that silenced them and the digest that carried them. */
  private async deliveryFacts(alertId: string): Promise<DeliveryFacts[]> {
    const records = await this.deliveries(alertId);
    return pMap(records, async (record) => {
      const muteId = (record.suppression as { mute_id?: string } | undefined)?.mute_id;
      const [muteItem, digest] = await Promise.all([
        muteId ? this.items.get(keys.mute(muteId)) : undefined,
        record.digest_id ? this.items.get(keys.delivery(String(record.digest_id), String(record.receiver_id))) : undefined,
      ]);
      return { record, ...(muteItem?.mute ? { mute: muteItem.mute as Mute } : {}), ...(digest ? { digest } : {}) };
    }, { concurrency: JOIN_CONCURRENCY });
  }

  /** Records stored in batches, in place of the pointers under their keys (their batches read together; gone with their retention: none). */
  private async resolvePointers(items: StoredItem[]): Promise<StoredItem[]> {
    const pointers = items.filter((i) => i.item_type === "record_ref");
    if (!pointers.length) return items;
    const batches = await this.batchGet(pointers.map((p) => keys.routineBatch(String(p.batch))));
    return items.flatMap((item) => {
      if (item.item_type !== "record_ref") return [item];
      const batch = batches.get(itemKeyString(keys.routineBatch(String(item.batch))));
      const found = batch && batchRecords(batch).find((r) => r.pk === item.pk && r.sk === item.sk);
      return found ? [found as StoredItem] : [];
    });
  }

  /** The items of these keys that exist, in the keys' order (a handful: GetItem each, in parallel). */
  private async getMany(keyList: ItemKey[]): Promise<StoredItem[]> {
    const unique = [...new Map(keyList.map((k) => [itemKeyString(k), k])).values()];
    const items = await pMap(unique, (k) => this.items.get(k), { concurrency: JOIN_CONCURRENCY });
    return items.filter((i): i is StoredItem => i !== undefined);
  }
}

/** The latest instant whose ISO form still sorts as a time: later years are written `+010000-…`, which sorts first. */
const LATEST_SORTABLE = "9999-12-31T23:59:59.999Z";

/**
 * A sort-key bound moved later by `ms`: its instant (before any `#`) is an ISO date-time in milliseconds.
 * Never earlier than the bound as a string (a forged cursor's bound can be any text).
 */
function laterBy(bound: string, ms: number): string {
  const at = Date.parse(instantOf(bound));
  if (Number.isNaN(at)) return bound;
  const later = at + ms >= Date.parse(LATEST_SORTABLE) ? LATEST_SORTABLE : new Date(at + ms).toISOString();
  return later > bound ? later : bound;
}

const positionOf = (item: Item): IndexPosition => ({ ix_at: item[AUDIT_SORT] as string, pk: item.pk as string, sk: item.sk as string });

function deliveryRow(d: StoredItem): DeliveryRow {
  const s = d.suppression as { reason?: string; detail?: string } | undefined;
  return {
    route: String(d.route ?? ""), receiver: String(d.receiver_label ?? d.receiver_id ?? ""), state: String(d.state ?? ""),
    attempts: Number(d.attempts ?? 0), updated_at: String(d.updated_at ?? ""),
    ...(s?.reason ? { reason: s.reason } : {}),
    ...(s?.detail ? { detail: s.detail } : {}),
    ...(d.digest_id ? { digest_id: String(d.digest_id) } : {}),
    ...(d.error ? { error: String(d.error) } : {}),
    ...(d.permanent ? { permanent: true } : {}),
    ...(d.onlooker ? { onlooker: true } : {}),
  };
}
