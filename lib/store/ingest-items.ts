/**
 * The items the ingest store writes besides records and alerts, as every adapter of the port stores
 * them (lib/store/ingest-store.ts, test/support/memory-ingest-store.ts). Each carries the TTL: live state
 * expires too, refreshed on each write, gone a retention after it stopped changing.
 */
import type { ServiceContext } from "../model/observations.js";
import type { AuditRow } from "../model/audit-row.js";
import type { ExecutionChange, ExecutionDecision, ExecutionRef, OrganizationNames, SeenPart, SourceCursor, StoredExecution } from "../model/ingest-store.js";
import type { IncidentState, ServiceState } from "../model/transitions.js";
import { auditAttributes } from "../model/audit-index.js";
import { keys, TTL_ATTRIBUTE } from "../model/items.js";

export const cursorItem = (cursor: SourceCursor, expiresAt: number) =>
  ({ ...keys.cursor(cursor.source), item_type: "cursor", cursor, version: cursor.version, [TTL_ATTRIBUTE]: expiresAt });

export const seenPartItem = (source: string, { part, ids }: SeenPart, expiresAt: number) =>
  ({ ...keys.seenPart(source, part), item_type: "seen", ids, [TTL_ATTRIBUTE]: expiresAt });

/** A part deleted: no ids, expired already (DynamoDB's TTL removes it). */
export const seenPartGone = (source: string, part: string, nowSeconds: number) =>
  ({ ...keys.seenPart(source, part), item_type: "seen", [TTL_ATTRIBUTE]: nowSeconds });

/** An execution's state, with its audit row's index attributes when it has one. */
export function executionItem(ref: ExecutionRef, state: StoredExecution, expiresAt: number, audit?: AuditRow) {
  const key = keys.execution(ref.serviceId, ref.executionId);
  return { ...key, item_type: "execution", state, version: state.version, [TTL_ATTRIBUTE]: expiresAt, ...(audit ? auditAttributes(audit, key.pk) : {}) };
}

export const incidentItem = (state: IncidentState, expiresAt: number) =>
  ({ ...keys.incident(state.subject), item_type: "incident", state, version: state.version, [TTL_ATTRIBUTE]: expiresAt });

export const serviceItem = (serviceId: string, state: ServiceState, expiresAt: number) =>
  ({ ...keys.service(serviceId), item_type: "service", state, version: state.version, [TTL_ATTRIBUTE]: expiresAt });

export const directoryItem = (serviceId: string, ctx: ServiceContext, expiresAt: number) =>
  ({ ...keys.directory(serviceId), item_type: "directory", service_id: serviceId, ctx, [TTL_ATTRIBUTE]: expiresAt });

export const namesItem = (names: OrganizationNames, expiresAt: number) =>
  ({ ...keys.names(names.organization_id), item_type: "names", names, [TTL_ATTRIBUTE]: expiresAt });

/**
 * The directory entries to write for names learned from the change feed: each merged over what is
 * known (and over an earlier entry for the same service), only those that differ from it.
 */
export function contextsToWrite(
  known: ReadonlyMap<string, ServiceContext>,
  entries: Array<{ id: string; ctx: ServiceContext }>,
): Array<{ id: string; ctx: ServiceContext }> {
  const merged = new Map(known);
  const out: Array<{ id: string; ctx: ServiceContext }> = [];
  for (const { id, ctx } of entries) {
    const next = { ...merged.get(id), ...ctx };
    if (JSON.stringify(next) === JSON.stringify(merged.get(id))) continue;
    merged.set(id, next);
    out.push({ id, ctx: next });
  }
  return out;
}

type Key = { pk: string; sk: string };

/** A write on a condition: the item's version as read, or no item where `version` is absent. */
export type ConditionalWrite =
  | { put: Key & Record<string, unknown>; version?: number }
  | { check: Key; version?: number };

export interface ObservationWrites<T> {
  /** All or nothing. */
  writes: ConditionalWrite[];
  /** Where the alert's put is in `writes`, if there is one. */
  alertIndex?: number;
  /** What the caller is told once the writes went through. */
  change: ExecutionChange<T>;
}

/**
 * What an observation's decision writes: the execution on the version read; the service on its
 * version when it changes, or a check of it when an alert was decided from it; the alert unless its
 * id was found in the outbox by an earlier attempt (`existingAlert`): then the transition is recorded
 * already, and the state is written without it.
 */
export function observationWrites<T>(
  ref: ExecutionRef,
  prev: StoredExecution | undefined,
  svc: ServiceState,
  decided: Extract<ExecutionDecision<T>, { changed: true }>,
  existingAlert: string | undefined,
  expiresAt: number,
): ObservationWrites<T> {
  const alertExisted = !!decided.alert && decided.alert.pk === existingAlert;
  const alert = alertExisted ? undefined : decided.alert;
  const next: StoredExecution = { ...decided.execution, version: (prev?.version ?? 0) + 1 };
  const svcVersion = svc.version === 0 ? undefined : svc.version;
  const writes: ConditionalWrite[] = [{ put: executionItem(ref, next, expiresAt, decided.audit), version: prev?.version }];
  if (decided.service && decided.service !== svc) {
    writes.push({ put: serviceItem(ref.serviceId, { ...decided.service, version: svc.version + 1 }, expiresAt), version: svcVersion });
  } else if (alert) {
    // The alert's kind (failed vs still failing) was decided from this service state: hold it still.
    writes.push({ check: keys.service(ref.serviceId), version: svcVersion });
  }
  const alertIndex = alert ? writes.push({ put: alert as unknown as Key & Record<string, unknown> }) - 1 : undefined;
  const outcome = alertExisted ? undefined : decided.outcome;
  return { writes, alertIndex, change: { changed: true, outcome, ...(alertExisted ? { alertExisted } : {}) } };
}

/**
 * Learns service names: reads what the directory knows, and writes each entry that adds to it through
 * `put` (one directory item), counting each write. Returns how many were written.
 */
export async function learnServicesInto(
  entries: Array<{ id: string; ctx: ServiceContext }>,
  io: { known(ids: string[]): Promise<ReadonlyMap<string, ServiceContext>>; put(item: ReturnType<typeof directoryItem>): Promise<void> | void; expiresAt(): number; writes: { count: number } },
): Promise<number> {
  if (!entries.length) return 0;
  const learned = contextsToWrite(await io.known(entries.map((e) => e.id)), entries);
  for (const { id, ctx } of learned) {
    io.writes.count++;
    await io.put(directoryItem(id, ctx, io.expiresAt()));
  }
  return learned.length;
}
