/**
 * The store port of the ingest stage and its DynamoDB adapter. Deduplication lives in conditional writes
 * here: a record is inserted once by id; an execution's status changes once, in the same transaction as
 * the service state and the alert (the outbox), so concurrent pollers cannot raise a transition twice.
 */
import { type DynamoDBClient, TransactionCanceledException, ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from "@aws-sdk/lib-dynamodb";
import type { AlertItem } from "../model/alert-item.js";
import { keys, TTL_ATTRIBUTE } from "../model/items.js";
import type { ServiceContext, DeploymentObservation } from "../model/observations.js";
import type { ExecutionState, ServiceState } from "../model/transitions.js";
import { emptyServiceState, enteredCounts, timesEntered } from "../ingest/transitions.js";
import { executionEntryId, executionRow } from "../model/audit-row.js";
import { auditAttributes } from "../model/audit-index.js";
import { DynamoQuarantine } from "./quarantine.js";
import type { QuarantinePort } from "../model/quarantine.js";

/** What a source remembers between polls, so that a poll with nothing new writes nothing. */
export interface SourceCursor {
  source: string;
  version: number;
  /** Ids (deliveries) or content hashes (cluster logs) of the last list read and stored. */
  seen?: string[];
  /**
   * Deployments: the last status of each execution on the last page, by service and execution (two
   * services of one history can share an execution id). A list, not a map keyed by platform ids: the
   * marshaller loses a key such as `__proto__`. Cursors written before kept `executions`, by execution
   * id alone: it is no longer read, and the next save drops it.
   */
  deployments?: Array<{ service_id: string; execution_id: string; status: string }>;
  /** Deployments: the page size to ask for next. */
  page_size?: number;
  /** Deployments: when a page last shared no execution with what was known (a gap may exist). */
  gap_suspected_at?: string;
  first_polled_at: string;
}

export interface StoredExecution extends ExecutionState {
  observation: DeploymentObservation;
  /** The last 50 statuses; `entered` keeps the counts of all of them. */
  history: Array<{ status: string; observed_at: string }>;
}

export type InsertResult = "inserted" | "exists";

export interface ExecutionChange<T> {
  /** False when the stored status was already this one: nothing written. */
  changed: boolean;
  outcome?: T;
  /** The alert decided was in the outbox already (same id): the change was written without it. */
  alertExisted?: boolean;
}

/** Decides, from the stored states, what an observation changes and which alert it raises. */
export type ExecutionDecider<T> = (
  prev: StoredExecution | undefined,
  service: ServiceState,
) => { changed: boolean; service?: ServiceState; alert?: AlertItem; outcome?: T };

export interface IngestStore extends QuarantinePort {
  getCursor(source: string): Promise<SourceCursor | undefined>;
  /** Saves when nobody else saved since `expectedVersion` was read; false when someone did. */
  saveCursor(cursor: SourceCursor, expectedVersion: number | undefined): Promise<boolean>;
  /** Inserts a record (and its alert, atomically) unless a record with its id exists. */
  insertRecord(record: Record<string, unknown> & { pk: string; sk: string }, alert?: AlertItem): Promise<InsertResult>;
  /**
   * Applies an observation of an execution under optimistic locking, re-deciding on conflict. `ctx`
   * (the service's names, project and environment) goes into the execution's audit row.
   */
  observeExecution<T>(obs: DeploymentObservation, observedAt: string, decide: ExecutionDecider<T>, ctx?: ServiceContext): Promise<ExecutionChange<T>>;
  /** Puts an alert into the outbox unless one with its id is there already; true when it was new. */
  raiseAlert(alert: AlertItem): Promise<boolean>;
  getServiceContexts(serviceIds: string[]): Promise<Map<string, ServiceContext>>;
  /** Records names learned from the change feed; writes only what differs from what is stored. */
  learnServices(entries: Array<{ id: string; ctx: ServiceContext }>): Promise<number>;
  /** Epoch seconds at which an item written now expires (the configured retention). */
  expiresAt(): number;
  /** Counts of what this store wrote, for benchmarks and the steady-state test. */
  readonly writes: { count: number };
}

export interface DynamoIngestStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  retentionMs: number;
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

  quarantine(entry: Parameters<QuarantinePort["quarantine"]>[0]): Promise<boolean> {
    this.writes.count += 2;
    return this.quarantined.quarantine(entry);
  }

  private now() {
    return this.opts.now?.() ?? new Date();
  }

  /** Epoch seconds at which retention ends for an item written now. */
  expiresAt(): number {
    return Math.floor((this.now().getTime() + this.opts.retentionMs) / 1000);
  }

  async getCursor(source: string): Promise<SourceCursor | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.cursor(source), ConsistentRead: true }));
    return Item?.cursor as SourceCursor | undefined;
  }

  async saveCursor(cursor: SourceCursor, expectedVersion: number | undefined): Promise<boolean> {
    try {
      this.writes.count++;
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          // Live state, but it expires too: refreshed on each write, gone a retention after the source stopped changing.
          Item: { ...keys.cursor(cursor.source), item_type: "cursor", cursor, version: cursor.version, [TTL_ATTRIBUTE]: this.expiresAt() },
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

  async insertRecord(record: Record<string, unknown> & { pk: string; sk: string }, alertIn?: AlertItem): Promise<InsertResult> {
    const item = { ...record, [TTL_ATTRIBUTE]: this.expiresAt() };
    // The alert's audit row names the record that raised it, for `lookout explain <alert>`.
    const recordId = (record.record as { id?: string } | undefined)?.id;
    const alert = alertIn?.audit && recordId ? { ...alertIn, audit: { ...alertIn.audit, source: recordId } } : alertIn;
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
      throw err;
    }
  }

  async observeExecution<T>(obs: DeploymentObservation, observedAt: string, decide: ExecutionDecider<T>, ctx?: ServiceContext): Promise<ExecutionChange<T>> {
    const execKey = keys.execution(obs.service_id, obs.execution_id);
    const svcKey = keys.service(obs.service_id);
    // An alert id found in the outbox already: the transition is recorded; write the state without it.
    let existingAlert: string | undefined;
    // Optimistic locking: on a lost race, read again and decide again (the winner's write may make ours moot).
    for (let attempt = 0; attempt < 8; attempt++) {
      const [execRes, svcRes] = await Promise.all([
        this.doc.send(new GetCommand({ TableName: this.table, Key: execKey, ConsistentRead: true })),
        this.doc.send(new GetCommand({ TableName: this.table, Key: svcKey, ConsistentRead: true })),
      ]);
      const prev = execRes.Item?.state as StoredExecution | undefined;
      const svc = (svcRes.Item?.state as ServiceState | undefined) ?? emptyServiceState();
      const decided = decide(prev, svc);
      if (!decided.changed) return { changed: false };
      const alertExisted = !!decided.alert && decided.alert.pk === existingAlert;
      const decision = alertExisted ? { ...decided, alert: undefined, outcome: undefined } : decided;

      const expires = this.expiresAt();
      const next: StoredExecution = {
        status: obs.status,
        version: (prev?.version ?? 0) + 1,
        first_seen_at: prev?.first_seen_at ?? observedAt,
        first_seen_status: prev?.first_seen_status ?? obs.status,
        entered: [...enteredCounts(prev).set(obs.status, timesEntered(prev, obs.status) + 1)].map(([status, times]) => ({ status, times })),
        observation: obs,
        history: [...(prev?.history ?? []), { status: obs.status, observed_at: observedAt }].slice(-50),
      };
      const items: NonNullable<TransactWriteCommandInput["TransactItems"]> = [
        {
          Put: {
            TableName: this.table,
            Item: {
              ...execKey, item_type: "execution", state: next, version: next.version, [TTL_ATTRIBUTE]: expires,
              ...auditAttributes(executionRow(obs, ctx, next.first_seen_at), execKey.pk),
            },
            ConditionExpression: prev ? "version = :v" : "attribute_not_exists(pk)",
            ExpressionAttributeValues: prev ? { ":v": prev.version } : undefined,
          },
        },
      ];
      if (decision.service && decision.service !== svc) {
        const nextSvc = { ...decision.service, version: svc.version + 1 };
        items.push({
          Put: {
            TableName: this.table,
            Item: { ...svcKey, item_type: "service", state: nextSvc, version: nextSvc.version, [TTL_ATTRIBUTE]: expires },
            ConditionExpression: svc.version === 0 ? "attribute_not_exists(pk)" : "version = :sv",
            ExpressionAttributeValues: svc.version === 0 ? undefined : { ":sv": svc.version },
          },
        });
      } else if (decision.alert) {
        // The alert's kind (failed vs still failing) was decided from this service state: hold it still.
        items.push({
          ConditionCheck: {
            TableName: this.table,
            Key: svcKey,
            ConditionExpression: svc.version === 0 ? "attribute_not_exists(pk)" : "version = :sv",
            ExpressionAttributeValues: svc.version === 0 ? undefined : { ":sv": svc.version },
          },
        });
      }
      let alertIndex: number | undefined;
      if (decision.alert) {
        alertIndex = items.length;
        const alert = decision.alert.audit
          ? { ...decision.alert, audit: { ...decision.alert.audit, source: executionEntryId(obs.service_id, obs.execution_id) } }
          : decision.alert;
        items.push({ Put: { TableName: this.table, Item: alert, ConditionExpression: "attribute_not_exists(pk)" } });
      }
      try {
        this.writes.count += items.filter((i) => !i.ConditionCheck).length;
        await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        return { changed: true, outcome: decision.outcome, ...(alertExisted ? { alertExisted } : {}) };
      } catch (err) {
        const refusal = refusalOf(err, alertIndex);
        if (refusal === "other") {
          const codes = (err as TransactionCanceledException).CancellationReasons?.map((r) => r.Code ?? "None").join(", ");
          if (!codes) throw err;
          throw new Error(`execution ${obs.execution_id} of ${obs.service_id}: write refused (per item: ${codes})`, { cause: err });
        }
        if (refusal === "alert_exists") existingAlert = decision.alert?.pk;
      }
    }
    throw new Error(`execution ${obs.execution_id} of ${obs.service_id}: too much contention, gave up after 8 attempts`);
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

  async learnServices(entries: Array<{ id: string; ctx: ServiceContext }>): Promise<number> {
    if (!entries.length) return 0;
    const known = await this.getServiceContexts(entries.map((e) => e.id));
    let written = 0;
    for (const { id, ctx } of entries) {
      const merged = { ...known.get(id), ...ctx };
      if (JSON.stringify(merged) === JSON.stringify(known.get(id))) continue;
      known.set(id, merged);
      this.writes.count++;
      written++;
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...keys.directory(id), item_type: "directory", service_id: id, ctx: merged, [TTL_ATTRIBUTE]: this.expiresAt() },
        }),
      );
    }
    return written;
  }
}
