/**
 * The port the ingest stage stores through. Deduplication lives in its conditional writes: a record is
 * inserted once by id; an execution's status changes once, in the same all-or-nothing write as the
 * service state and the alert (the outbox), so concurrent pollers cannot raise a transition twice.
 * Adapters: lib/store/ingest-store.ts (DynamoDB), test/support/memory-ingest-store.ts (in memory); both
 * are checked by the same contract tests (test/support/ingest-store-contract.ts).
 */
import type { ServiceContext, DeploymentObservation } from "./observations.js";
import type { AuditRow } from "./audit-row.js";
import type { ExecutionState, IncidentState, ServiceState } from "./transitions.js";
import type { AlertItem } from "./alert-item.js";
import type { QuarantinePort } from "./quarantine.js";

/** What a source remembers between polls, so that a poll with nothing new writes nothing. */
export interface SourceCursor {
  source: string;
  version: number;
  /**
   * Ids (deliveries) or content hashes (cluster logs) of the list read and stored, the latest first
   * sealed into `seen_parts` once they outgrow a part of the cursor (lib/poll/seen.ts).
   */
  seen?: string[];
  /** The parts of the seen ids kept in items of their own (`getSeenParts`), by content hash. */
  seen_parts?: string[];
  /** A digest of the list's ids when all were stored: the same list again reads no part. */
  listed?: string;
  /**
   * While a flood is stored over several polls: records older than this stay quiet, as the backfill
   * rule decided when the poll that found it began (first sight, or after a long outage).
   */
  quiet_before?: string;
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

/** Seen ids sealed into an item of their own, known by the hash of its ids. */
export interface SeenPart {
  part: string;
  ids: string[];
}

/**
 * An organization's project and member names as the platform lists them (endpoints 14 and 15), cached
 * so that alerts can name them without a request each (lib/poll/platform-names.ts).
 */
export interface OrganizationNames {
  organization_id: string;
  projects: Array<{ id: string; name: string }>;
  members: Array<{ id: string; name?: string; email?: string }>;
  /** When the lists were last read; absent while no read succeeded. */
  refreshed_at?: string;
  /** Not read again before this (ISO): later after a success than after a failed read. */
  refresh_after: string;
}

export interface StoredExecution extends ExecutionState {
  observation: DeploymentObservation;
  /** The last 50 statuses; `entered` keeps the counts of all of them. */
  history: Array<{ status: string; observed_at: string }>;
}

/** A stored record as lib/model/items.ts `recordItem` builds it. */
export type RecordItem = Record<string, unknown> & { pk: string; sk: string };

export type InsertResult = "inserted" | "exists";

/**
 * A write the store refuses for what it is (an item too large, nested too deep, an invalid value):
 * writing it again fails again, so the record is quarantined instead (docs/audit.md, "Quarantine").
 * Throttling, network and conflicts are not this: they pass. Adapters translate their service's
 * errors into it; its message says why, the service's error is its cause.
 */
export class RecordUnwritable extends Error {
  override readonly name = "RecordUnwritable";
}

/** The refusal `err` is or wraps, if any: whoever passes it on may wrap it to name the write. */
export function recordUnwritable(err: unknown): RecordUnwritable | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof RecordUnwritable) return e;
  }
  return undefined;
}

/** A record `insertRecords` did not write: a RecordUnwritable, or the passing error that hit its batch. */
export interface RecordRefusal {
  record: RecordItem;
  error: unknown;
}

/** One deployment execution: two services of one history can share an execution id. */
export interface ExecutionRef {
  serviceId: string;
  executionId: string;
}

export interface ExecutionChange<T> {
  /** False when the decision changed nothing: nothing written. */
  changed: boolean;
  outcome?: T;
  /** The alert decided was in the outbox already (same id): the change was written without it. */
  alertExisted?: boolean;
}

/** What an observation changes: nothing, or the execution (with its service and alert, when they change). */
export type ExecutionDecision<T> =
  | { changed: false }
  | {
      changed: true;
      /** The execution as it is to be stored; the store keeps its version. */
      execution: Omit<StoredExecution, "version">;
      /** The execution's audit row, found through the audit indexes. */
      audit?: AuditRow;
      /** The service state after this observation; the same object when it does not change. */
      service?: ServiceState;
      alert?: AlertItem;
      outcome?: T;
    };

/** Decides, from the stored states, what an observation changes and which alert it raises. Pure: it may run again after a lost race. */
export type ExecutionDecider<T> = (prev: StoredExecution | undefined, service: ServiceState) => ExecutionDecision<T>;

export interface IngestStore extends QuarantinePort {
  getCursor(source: string): Promise<SourceCursor | undefined>;
  /** Saves when nobody else saved since `expectedVersion` was read; false when someone did. */
  saveCursor(cursor: SourceCursor, expectedVersion: number | undefined): Promise<boolean>;
  /** The parts of a source's seen ids that are stored (a part gone, expired or dropped, is absent). */
  getSeenParts(source: string, parts: string[]): Promise<Map<string, string[]>>;
  /** Stores parts of seen ids, each under its content hash: a part written twice is the same item. */
  putSeenParts(source: string, parts: SeenPart[]): Promise<void>;
  deleteSeenParts(source: string, parts: string[]): Promise<void>;
  /** A webhook target's or a cluster's incident state, by subject; undefined when never stored. */
  getIncident(subject: string): Promise<IncidentState | undefined>;
  /** Saves when nobody else saved since `expectedVersion` was read (undefined: none stored); false when someone did. */
  saveIncident(state: IncidentState, expectedVersion: number | undefined): Promise<boolean>;
  /**
   * Inserts a record (and its alert, both or neither) unless a record with its key exists. Throws
   * RecordUnwritable when the store refuses the record for what it is.
   */
  insertRecord(record: RecordItem, alert?: AlertItem): Promise<InsertResult>;
  /**
   * Writes records that carry no alert, without a condition and in batches (BatchWriteItem, 25 a
   * request, what DynamoDB leaves unprocessed asked again with backoff). A record stored already is
   * written again, which is harmless: a record is immutable and keyed by its id (only `observed_at`
   * and the TTL may move to this write's). Never throws for a record: it returns those not written,
   * each with its error — RecordUnwritable for one DynamoDB refuses for what it is (too large, too deep)
   * alone, the others of its batch still written; a passing error (throttling) for each record of the
   * batch it hit.
   */
  insertRecords(records: RecordItem[]): Promise<RecordRefusal[]>;
  /**
   * Reads the execution and its service, asks `decide`, and writes the execution, the service and the
   * alert together on condition that neither state changed since the read; on a lost race reads and
   * decides again. An alert whose id is in the outbox already is left out (`alertExisted`). Throws
   * RecordUnwritable when the store refuses the execution (or its alert) for what it is.
   */
  observeExecution<T>(execution: ExecutionRef, decide: ExecutionDecider<T>): Promise<ExecutionChange<T>>;
  /** Puts an alert into the outbox unless one with its id is there already; true when it was new. */
  raiseAlert(alert: AlertItem): Promise<boolean>;
  getServiceContexts(serviceIds: string[]): Promise<Map<string, ServiceContext>>;
  /** Records names learned from the change feed; writes only what differs from what is stored. */
  learnServices(entries: Array<{ id: string; ctx: ServiceContext }>): Promise<number>;
  /** The organization's cached names, fresh or stale; undefined when never read. */
  getOrganizationNames(organizationId: string): Promise<OrganizationNames | undefined>;
  /** Replaces the organization's cached names (the last refresh wins). */
  saveOrganizationNames(names: OrganizationNames): Promise<void>;
  /** Epoch seconds at which an item written now expires (the configured retention). */
  expiresAt(): number;
  /** Counts of what this store wrote, for benchmarks and the steady-state test. */
  readonly writes: { count: number };
}
