/**
 * The ingest store held in memory: the IngestStore port with DynamoIngestStore's semantics — the same
 * items by the same keys, conditional puts, writes that go together all or nothing, version checks
 * and lost races read again — without a table. For fast tests of polling decisions.
 */
import type { ServiceContext } from "../../lib/model/observations.js";
import type {
  ExecutionChange,
  ExecutionDecider,
  ExecutionRef,
  IngestStore,
  InsertResult,
  OrganizationNames,
  RecordItem,
  RecordRefusal,
  SeenPart,
  SourceCursor,
  StoredExecution,
} from "../../lib/model/ingest-store.js";
import { type IncidentState, type ServiceState, emptyServiceState } from "../../lib/model/transitions.js";
import type { AlertItem } from "../../lib/model/alert-item.js";
import { TTL_ATTRIBUTE, expiresAfter, itemKeyString, keys } from "../../lib/model/items.js";
import type { QuarantineWrite } from "../../lib/model/quarantine.js";
import { LOST_RACE, retryLostRaces } from "../../lib/store/optimistic.js";
import { type ConditionalWrite, cursorItem, incidentItem, learnServicesInto, namesItem, observationWrites, seenPartItem } from "../../lib/store/ingest-items.js";

type Item = Record<string, unknown> & { pk: string; sk: string };
type Key = { pk: string; sk: string };

export interface MemoryIngestStoreOptions {
  retentionMs: number;
  /** Records written without an alert (`insertRecords`): kept this long instead (default `retentionMs`). */
  routineRetentionMs?: number;
  now?: () => Date;
}

export class MemoryIngestStore implements IngestStore {
  private readonly items = new Map<string, Item>();
  readonly writes = { count: 0 };

  constructor(private readonly opts: MemoryIngestStoreOptions) {}

  /** Every item stored, copied: what a scan of the table would give. */
  scan(): Item[] {
    return [...this.items.values()].map((i) => structuredClone(i));
  }

  expiresAt(): number {
    return expiresAfter((this.opts.now?.() ?? new Date()).getTime(), this.opts.retentionMs);
  }

  async quarantine({ item, health }: QuarantineWrite): Promise<boolean> {
    this.writes.count += 2;
    return this.writeAll([{ put: item }, { put: asItem(health) }]);
  }

  async getCursor(source: string): Promise<SourceCursor | undefined> {
    return (await this.get(keys.cursor(source)))?.cursor as SourceCursor | undefined;
  }

  async saveCursor(cursor: SourceCursor, expectedVersion: number | undefined): Promise<boolean> {
    this.writes.count++;
    return this.writeAll([{ put: cursorItem(cursor, this.expiresAt()), version: expectedVersion }]);
  }

  async getSeenParts(source: string, parts: string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>();
    for (const part of parts) {
      const item = await this.get(keys.seenPart(source, part));
      if (item) found.set(part, item.ids as string[]);
    }
    return found;
  }

  async putSeenParts(source: string, parts: SeenPart[]): Promise<void> {
    this.writes.count += parts.length;
    for (const p of parts) {
      const item = seenPartItem(source, p, this.expiresAt());
      this.items.set(itemKeyString(item), structuredClone(item));
    }
  }

  async deleteSeenParts(source: string, parts: string[]): Promise<void> {
    this.writes.count += parts.length;
    for (const part of parts) this.items.delete(itemKeyString(keys.seenPart(source, part)));
  }

  async getIncident(subject: string): Promise<IncidentState | undefined> {
    return (await this.get(keys.incident(subject)))?.state as IncidentState | undefined;
  }

  async saveIncident(state: IncidentState, expectedVersion: number | undefined): Promise<boolean> {
    this.writes.count++;
    return this.writeAll([{ put: incidentItem(state, this.expiresAt()), version: expectedVersion }]);
  }

  async insertRecord(record: RecordItem, alert?: AlertItem): Promise<InsertResult> {
    this.writes.count += alert ? 2 : 1;
    const puts = [{ put: { ...record, [TTL_ATTRIBUTE]: this.expiresAt() } }, ...(alert ? [{ put: asItem(alert) }] : [])];
    return this.writeAll(puts) ? "inserted" : "exists";
  }

  /** Each record put without a condition, as DynamoIngestStore's batches do; nothing is refused in memory. */
  async insertRecords(records: RecordItem[]): Promise<RecordRefusal[]> {
    this.writes.count += new Set(records.map(itemKeyString)).size;
    const expiresAt = expiresAfter((this.opts.now?.() ?? new Date()).getTime(), this.opts.routineRetentionMs ?? this.opts.retentionMs);
    for (const r of records) this.items.set(itemKeyString(r), structuredClone({ ...r, [TTL_ATTRIBUTE]: expiresAt }));
    return [];
  }

  observeExecution<T>(ref: ExecutionRef, decide: ExecutionDecider<T>): Promise<ExecutionChange<T>> {
    // An alert id found in the outbox already: the transition is recorded; write the state without it.
    let existingAlert: string | undefined;
    return retryLostRaces({ attempts: 8, what: `execution ${ref.executionId} of ${ref.serviceId}` }, async () => {
      const [execItem, svcItem] = await Promise.all([
        this.get(keys.execution(ref.serviceId, ref.executionId)),
        this.get(keys.service(ref.serviceId)),
      ]);
      const prev = execItem?.state as StoredExecution | undefined;
      const svc = (svcItem?.state as ServiceState | undefined) ?? emptyServiceState();
      const decided = decide(prev, svc);
      if (!decided.changed) return { changed: false };
      const { writes, alertIndex, change } = observationWrites(ref, prev, svc, decided, existingAlert, this.expiresAt());
      this.writes.count += writes.filter((w) => "put" in w).length;
      if (this.writeAll(writes)) return change;
      // Only the alert's condition failed: as DynamoDB's refusal reasons tell (lib/store/ingest-store.ts `refusalOf`).
      const refused = writes.filter((w) => !this.holds(w));
      if (alertIndex !== undefined && refused.length === 1 && refused[0] === writes[alertIndex]) existingAlert = keyOfWrite(refused[0]!).pk;
      return LOST_RACE;
    });
  }

  async raiseAlert(alert: AlertItem): Promise<boolean> {
    this.writes.count++;
    return this.writeAll([{ put: asItem(alert) }]);
  }

  async getServiceContexts(serviceIds: string[]): Promise<Map<string, ServiceContext>> {
    const out = new Map<string, ServiceContext>();
    for (const id of new Set(serviceIds)) {
      const item = await this.get(keys.directory(id));
      if (item) out.set(id, item.ctx as ServiceContext);
    }
    return out;
  }

  learnServices(entries: Array<{ id: string; ctx: ServiceContext }>): Promise<number> {
    return learnServicesInto(entries, {
      known: (ids) => this.getServiceContexts(ids),
      put: (item) => void this.items.set(itemKeyString(item), structuredClone(item)),
      expiresAt: () => this.expiresAt(),
      writes: this.writes,
    });
  }

  async getOrganizationNames(organizationId: string): Promise<OrganizationNames | undefined> {
    return (await this.get(keys.names(organizationId)))?.names as OrganizationNames | undefined;
  }

  async saveOrganizationNames(names: OrganizationNames): Promise<void> {
    this.writes.count++;
    const item = namesItem(names, this.expiresAt());
    this.items.set(itemKeyString(item), structuredClone(item));
  }

  /** A copy of the item, as a consistent read gives. */
  private async get(key: Key): Promise<Item | undefined> {
    // A read is a round trip: other writers may go between it and the write that follows.
    await Promise.resolve();
    const item = this.items.get(itemKeyString(key));
    return item && structuredClone(item);
  }

  /** Whether a write's condition holds: the item's version as read, or no item where none was read. */
  private holds(w: ConditionalWrite): boolean {
    const stored = this.items.get(itemKeyString(keyOfWrite(w)));
    return w.version === undefined ? !stored : stored?.version === w.version;
  }

  /** Every write whose condition holds, or none: false when one does not. */
  private writeAll(writes: ConditionalWrite[]): boolean {
    if (!writes.every((w) => this.holds(w))) return false;
    for (const w of writes) if ("put" in w) this.items.set(itemKeyString(w.put), structuredClone(w.put));
    return true;
  }
}

const keyOfWrite = (w: ConditionalWrite): Key => ("put" in w ? w.put : w.check);



const asItem = (alert: AlertItem) => alert as unknown as Item;
