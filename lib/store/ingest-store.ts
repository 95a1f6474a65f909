/**
 * The ingest store's DynamoDB adapter (the port: lib/model/ingest-store.ts). Persistence only: what to
 * write is decided by the caller; conditional writes and transactions make each write happen once.
 */
import { type DynamoDBClient, TransactionCanceledException, ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import pMap from "p-map";
import {
  BatchGetCommand,
  BatchWriteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { AlertItem } from "../model/alert-item.js";
import { expiresAfter, itemKeyString, keys, TTL_ATTRIBUTE } from "../model/items.js";
import type { ServiceContext } from "../model/observations.js";
import { type IncidentState, type ServiceState, emptyServiceState } from "../model/transitions.js";
import { DynamoQuarantine } from "./quarantine.js";
import { fullJitterMs, UNPROCESSED_BACKOFF } from "../model/backoff.js";
import type { QuarantineWrite } from "../model/quarantine.js";
import { LOST_RACE, retryLostRaces } from "./optimistic.js";
import { routineWrite } from "./routine-batches.js";
import { type ConditionalWrite, cursorItem, incidentItem, learnServicesInto, namesItem, observationWrites, seenPartGone, seenPartItem } from "./ingest-items.js";
import {
  type ExecutionChange,
  type ExecutionDecider,
  type ExecutionRef,
  type IngestStore,
  type InsertResult,
  type OrganizationNames,
  type RecordItem,
  type RecordRefusal,
  RecordUnwritable,
  type SeenPart,
  type SourceCursor,
  type StoredExecution,
} from "../model/ingest-store.js";

type TransactItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];

export interface DynamoIngestStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionMs: number;
  /** Records written without an alert (`insertRecords`): kept this long instead (default `retentionMs`). */
  routineRetentionMs?: number;
  now?: () => Date;
}

/**
 * Why a transaction was refused, from its per-item CancellationReasons: `contention` when an item of
 * the state (or any item, by a conflicting transaction) lost a race, worth reading again and retrying;
 * `alert_exists` when only the alert's put found an alert with its id, meaning the transition is
 * already recorded; `other` (throttling, validation…) is not retried here.
 */
export function refusalOf(err: unknown, alertIndex: number | undefined): "contention" | "alert_exists" | "other" {
  if (!(err instanceof TransactionCanceledException)) return "other";
  const codes = (err.CancellationReasons ?? []).map((r) => r.Code ?? "None");
  const refused = codes.map((code, i) => ({ code, i })).filter((r) => r.code !== "None");
  if (!refused.length) return "other";
  if (refused.every((r) => r.i === alertIndex && r.code === "ConditionalCheckFailed")) return "alert_exists";
  if (refused.every((r) => r.code === "ConditionalCheckFailed" || r.code === "TransactionConflict")) return "contention";
  return "other";
}

/** BatchWriteItem's limit of items in one request. */
const BATCH_SIZE = 25;
/** Batch requests in flight at once for one call of insertRecords: as many as the plain BatchWriteItem it is measured against (BENCHMARKS.md, "ingest"). */
const BATCHES_IN_FLIGHT = 16;
/** Requests for one batch before what DynamoDB still leaves unprocessed is given up on (the poll fails; the next reads it again). */
const UNPROCESSED_ATTEMPTS = 8;
/** Seen parts read or written at once: a flood's are a few dozen items of up to 200 KB. */
const PARTS_IN_FLIGHT = 8;

/**
 * A write DynamoDB refuses for what it is (item or key too large, nesting too deep, an invalid value):
 * writing it again fails again. Throttling, network and conflicts are not this.
 */
function isUnwritable(err: unknown): boolean {
  // The error may be wrapped to say which write it was: the cause decides.
  for (let e = err as { name?: string; CancellationReasons?: Array<{ Code?: string }>; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e.name === "ValidationException") return true;
    if (e instanceof TransactionCanceledException && (e.CancellationReasons ?? []).some((r) => r.Code === "ValidationError")) return true;
  }
  return false;
}

/** The port's refusal for a write DynamoDB refuses for what it is; any other error as it is. */
function inDomainTerms(err: unknown): unknown {
  if (!isUnwritable(err)) return err;
  const e = err as Error;
  return new RecordUnwritable(`DynamoDB refused the write: ${e.name}: ${e.message}`, { cause: err });
}

const isConditionFailure = (err: unknown) =>
  err instanceof ConditionalCheckFailedException ||
  (err instanceof TransactionCanceledException &&
    (err.CancellationReasons ?? []).some((r) => r.Code === "ConditionalCheckFailed" || r.Code === "TransactionConflict"));

export class DynamoIngestStore implements IngestStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly quarantined: DynamoQuarantine;
  readonly writes = { count: 0 };

  constructor(private readonly opts: DynamoIngestStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(opts.client, { marshallOptions: { removeUndefinedValues: true } });
    this.table = opts.tableName;
    this.quarantined = new DynamoQuarantine(opts);
  }

  quarantine(write: QuarantineWrite): Promise<boolean> {
    this.writes.count += 2;
    return this.quarantined.quarantine(write);
  }

  /** Epoch seconds at which retention ends for an item written now. */
  expiresAt(): number {
    return this.quarantined.expiresAt();
  }

  async getCursor(source: string): Promise<SourceCursor | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.cursor(source), ConsistentRead: true }));
    return Item?.cursor as SourceCursor | undefined;
  }

  saveCursor(cursor: SourceCursor, expectedVersion: number | undefined): Promise<boolean> {
    return this.putOnVersion(cursorItem(cursor, this.expiresAt()), expectedVersion);
  }

  async getSeenParts(source: string, parts: string[]): Promise<Map<string, string[]>> {
    const found = await pMap(parts, async (part) => {
      const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.seenPart(source, part), ConsistentRead: true }));
      // A part deleted is an item without ids until its TTL removes it.
      return [part, Item?.ids as string[] | undefined] as const;
    }, { concurrency: PARTS_IN_FLIGHT });
    return new Map(found.filter((f): f is readonly [string, string[]] => f[1] !== undefined));
  }

  async putSeenParts(source: string, parts: SeenPart[]): Promise<void> {
    this.writes.count += parts.length;
    await pMap(parts, (p) => this.doc.send(new PutCommand({ TableName: this.table, Item: seenPartItem(source, p, this.expiresAt()) })), { concurrency: PARTS_IN_FLIGHT });
  }

  /** Each part overwritten by an empty item that expires at once: the poll function may put items, not delete them. */
  async deleteSeenParts(source: string, parts: string[]): Promise<void> {
    this.writes.count += parts.length;
    const now = expiresAfter((this.opts.now?.() ?? new Date()).getTime(), 0);
    await pMap(parts, (part) => this.doc.send(new PutCommand({ TableName: this.table, Item: seenPartGone(source, part, now) })), { concurrency: PARTS_IN_FLIGHT });
  }

  async getIncident(subject: string): Promise<IncidentState | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.incident(subject), ConsistentRead: true }));
    return Item?.state as IncidentState | undefined;
  }

  saveIncident(state: IncidentState, expectedVersion: number | undefined): Promise<boolean> {
    return this.putOnVersion(incidentItem(state, this.expiresAt()), expectedVersion);
  }

  /** Puts an item if its stored version is still `expectedVersion` (none stored when undefined); false when not. */
  private async putOnVersion(item: Record<string, unknown>, expectedVersion: number | undefined): Promise<boolean> {
    try {
      this.writes.count++;
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: item,
          ConditionExpression: expectedVersion === undefined ? "attribute_not_exists(pk)" : "version = :v",
          ExpressionAttributeValues: expectedVersion === undefined ? undefined : { ":v": expectedVersion },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async insertRecord(record: RecordItem, alert?: AlertItem): Promise<InsertResult> {
    const item = { ...record, [TTL_ATTRIBUTE]: this.expiresAt() };
    try {
      if (!alert) {
        this.writes.count++;
        await this.doc.send(new PutCommand({ TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" }));
      } else {
        this.writes.count += 2;
        await this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              { Put: { TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } },
              { Put: { TableName: this.table, Item: alert, ConditionExpression: "attribute_not_exists(pk)" } },
            ],
          }),
        );
      }
      return "inserted";
    } catch (err) {
      if (isConditionFailure(err)) return "exists";
      throw inDomainTerms(err);
    }
  }

  /**
   * Records that raised nothing, stored compactly (lib/store/routine-batches.ts): their batches first,
   * then the pointers under each record's key, so a pointer never names a batch not written. A batch
   * DynamoDB refuses for what it is (it cannot be, short of a bug) is written as its records' own items.
   */
  async insertRecords(records: RecordItem[]): Promise<RecordRefusal[]> {
    const expiresAt = expiresAfter((this.opts.now?.() ?? new Date()).getTime(), this.opts.routineRetentionMs ?? this.opts.retentionMs);
    // One key twice is one record: the later write of a key wins, as one by one it would.
    const unique = [...new Map(records.map((r) => [itemKeyString(r), r])).values()];
    const { batches, pointers } = routineWrite(unique, expiresAt);
    const refusals = await this.writeAll(batches.map((b) => b.item));
    const failed = new Map(refusals.map((r) => [itemKeyString(r.record), r.error]));
    const out: RecordRefusal[] = [];
    const whole: RecordItem[] = [];
    const pointed = new Set<string>();
    for (const b of batches) {
      const error = failed.get(itemKeyString(b.item));
      if (error === undefined) for (const r of b.records) pointed.add(itemKeyString(r));
      else if (isUnwritable(error)) whole.push(...b.records);
      else out.push(...b.records.map((record) => ({ record, error })));
    }
    const pointerRefusals = await this.writeAll(pointers.filter((p) => pointed.has(itemKeyString(p))));
    const byKey = new Map(unique.map((r) => [itemKeyString(r), r]));
    out.push(...pointerRefusals.map((r) => ({ record: byKey.get(itemKeyString(r.record))!, error: r.error })));
    if (whole.length) out.push(...(await this.writeAll(whole.map((r) => ({ ...r, [TTL_ATTRIBUTE]: expiresAt })))));
    return out.map((r) => ({ record: r.record, error: inDomainTerms(r.error) }));
  }

  /** Items in BatchWriteItem requests of 25, several in flight: those not written, with why. */
  private async writeAll(items: RecordItem[]): Promise<RecordRefusal[]> {
    const batches: RecordItem[][] = [];
    for (let i = 0; i < items.length; i += BATCH_SIZE) batches.push(items.slice(i, i + BATCH_SIZE));
    return (await pMap(batches, (batch) => this.writeBatch(batch), { concurrency: BATCHES_IN_FLIGHT })).flat();
  }

  /**
   * One BatchWriteItem of at most 25 items, what it leaves unprocessed asked again with backoff. A
   * validation error refuses the whole request for one item: then each is put alone, so that only
   * the one DynamoDB refuses is refused.
   */
  private async writeBatch(items: RecordItem[]): Promise<RecordRefusal[]> {
    this.writes.count += items.length;
    let pending: Array<Record<string, unknown>> = items;
    try {
      for (let attempt = 0; pending.length && attempt < UNPROCESSED_ATTEMPTS; attempt++) {
        if (attempt) await new Promise((r) => setTimeout(r, fullJitterMs(attempt, UNPROCESSED_BACKOFF, Math.random)));
        const res = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.table]: pending.map((Item) => ({ PutRequest: { Item } })) } }));
        pending = (res.UnprocessedItems?.[this.table] ?? []).map((w) => w.PutRequest!.Item!);
      }
    } catch (err) {
      if (!isUnwritable(err)) return items.map((record) => ({ record, error: err }));
      return (await Promise.all(items.map((item) => this.putAlone(item)))).filter((r) => r !== undefined);
    }
    const error = Object.assign(new Error(`${pending.length} records still unprocessed after ${UNPROCESSED_ATTEMPTS} BatchWriteItem requests`), { name: "UnprocessedItems" });
    const left = new Set(pending.map(itemKeyString));
    return items.filter((i) => left.has(itemKeyString(i))).map((record) => ({ record, error }));
  }

  /** One record put alone, without a condition: its refusal, if DynamoDB refuses it. */
  private async putAlone(item: RecordItem): Promise<RecordRefusal | undefined> {
    try {
      await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
      return undefined;
    } catch (error) {
      return { record: item, error };
    }
  }

  observeExecution<T>(ref: ExecutionRef, decide: ExecutionDecider<T>): Promise<ExecutionChange<T>> {
    const execKey = keys.execution(ref.serviceId, ref.executionId);
    const svcKey = keys.service(ref.serviceId);
    const what = `execution ${ref.executionId} of ${ref.serviceId}`;
    // An alert id found in the outbox already: the transition is recorded; write the state without it.
    let existingAlert: string | undefined;
    // On a lost race, read again and decide again (the winner's write may make ours moot).
    const observed = retryLostRaces<ExecutionChange<T>>({ attempts: 8, what }, async () => {
      const [execRes, svcRes] = await Promise.all([
        this.doc.send(new GetCommand({ TableName: this.table, Key: execKey, ConsistentRead: true })),
        this.doc.send(new GetCommand({ TableName: this.table, Key: svcKey, ConsistentRead: true })),
      ]);
      const prev = execRes.Item?.state as StoredExecution | undefined;
      const svc = (svcRes.Item?.state as ServiceState | undefined) ?? emptyServiceState();
      const decided = decide(prev, svc);
      if (!decided.changed) return { changed: false };
      const { writes, alertIndex, change } = observationWrites(ref, prev, svc, decided, existingAlert, this.expiresAt());
      try {
        this.writes.count += writes.filter((w) => "put" in w).length;
        await this.doc.send(new TransactWriteCommand({ TransactItems: writes.map((w) => this.transactItem(w)) }));
        return change;
      } catch (err) {
        const refusal = refusalOf(err, alertIndex);
        if (refusal === "other") {
          const codes = (err as TransactionCanceledException).CancellationReasons?.map((r) => r.Code ?? "None").join(", ");
          if (!codes) throw err;
          throw new Error(`${what}: write refused (per item: ${codes})`, { cause: err });
        }
        if (refusal === "alert_exists") existingAlert = (writes[alertIndex!] as { put: { pk: string } }).put.pk;
        return LOST_RACE;
      }
    });
    return observed.catch((err: unknown) => {
      throw inDomainTerms(err);
    });
  }

  /** A conditional write as an item of a transaction. */
  private transactItem(w: ConditionalWrite): TransactItem {
    const condition = w.version === undefined
      ? { ConditionExpression: "attribute_not_exists(pk)" }
      : { ConditionExpression: "version = :v", ExpressionAttributeValues: { ":v": w.version } };
    return "put" in w
      ? { Put: { TableName: this.table, Item: w.put, ...condition } }
      : { ConditionCheck: { TableName: this.table, Key: w.check, ...condition } };
  }

  async raiseAlert(alert: AlertItem): Promise<boolean> {
    try {
      this.writes.count++;
      await this.doc.send(new PutCommand({ TableName: this.table, Item: alert, ConditionExpression: "attribute_not_exists(pk)" }));
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  async getServiceContexts(serviceIds: string[]): Promise<Map<string, ServiceContext>> {
    const out = new Map<string, ServiceContext>();
    const unique = [...new Set(serviceIds)];
    for (let i = 0; i < unique.length; i += 100) {
      let request: Record<string, { Keys: Record<string, unknown>[] }> | undefined = {
        [this.table]: { Keys: unique.slice(i, i + 100).map((id) => keys.directory(id)) },
      };
      // BatchGet may answer part of the keys: ask again for the rest.
      for (let round = 0; request && Object.keys(request).length && round < 10; round++) {
        const res = await this.doc.send(new BatchGetCommand({ RequestItems: request }));
        for (const item of res.Responses?.[this.table] ?? []) out.set(item.service_id as string, item.ctx as ServiceContext);
        request = res.UnprocessedKeys as typeof request;
      }
    }
    return out;
  }

  learnServices(entries: Array<{ id: string; ctx: ServiceContext }>): Promise<number> {
    return learnServicesInto(entries, {
      known: (ids) => this.getServiceContexts(ids),
      put: async (item) => void (await this.doc.send(new PutCommand({ TableName: this.table, Item: item }))),
      expiresAt: () => this.expiresAt(),
      writes: this.writes,
    });
  }

  async getOrganizationNames(organizationId: string): Promise<OrganizationNames | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.names(organizationId) }));
    return Item?.names as OrganizationNames | undefined;
  }

  async saveOrganizationNames(names: OrganizationNames): Promise<void> {
    this.writes.count++;
    await this.doc.send(new PutCommand({ TableName: this.table, Item: namesItem(names, this.expiresAt()) }));
  }
}
