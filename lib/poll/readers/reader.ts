/**
 * What every source reader shares: the poll in progress (request, dependencies, the result it fills),
 * the backfill rule, and setting aside what cannot be stored (docs/audit.md, "Quarantine").
 */
import type { RejectedItem } from "../../platform/client.js";
import type { CallCost } from "../../platform/cost.js";
import type { PollRequest, PollResult } from "../../model/poll.js";
import type { RecordUnwritable, SourceCursor } from "../../model/ingest-store.js";
import type { AlertItem, Suppression } from "../../model/alert-item.js";
import type { QuarantineEntry } from "../../model/quarantine.js";
import { setAside } from "../../alerts/quarantine.js";
import { formatDuration } from "../../config/duration.js";
import { type SourceRef, parseSourceKey } from "../../model/source.js";
import { contentHash } from "../../model/hash.js";
import { plausibleInstant } from "../../model/time.js";
import { knownSecretsOf, redact, redactText } from "../../platform/redact.js";
import type { PollDeps } from "../deps.js";

/** One poll of one source as it goes. */
export interface PollContext {
  req: PollRequest;
  deps: PollDeps;
  /** Filled as the poll goes; `pollSource` returns it. */
  result: PollResult;
  /** Counts what a platform call cost into the result. */
  spend(cost: CallCost): void;
}

/** Reads one kind of source: stores what is new, raises its alerts, moves its cursor; throws when the read failed. */
export interface SourceReader {
  read(poll: PollContext): Promise<void>;
}

/**
 * The time before which records of this poll stay quiet: at first sight, and after an outage of Lookout
 * longer than the backfill window, records older than the window are stored but raise no alert.
 */
export function backfillCutoff({ req, deps }: PollContext, cursor: SourceCursor | undefined): number | undefined {
  const now = deps.now().getTime();
  const longOutage = req.outage && Date.parse(req.outage.to) - Date.parse(req.outage.from) > deps.backfillWindowMs;
  return !cursor || longOutage ? now - deps.backfillWindowMs : undefined;
}

export function suppressionFor(occurredAt: string | undefined, cutoff: number | undefined, windowMs: number): Suppression | undefined {
  if (cutoff === undefined || !occurredAt) return undefined;
  // An unreadable or implausible time counts as when Lookout saw it: now, inside the window.
  const t = plausibleInstant(occurredAt)?.ms;
  if (t === undefined || t >= cutoff) return undefined;
  return {
    reason: "backfill",
    detail: `older than the ${formatDuration(windowMs)} backfill window when the source was first seen, or when Lookout resumed after a longer outage`,
  };
}

/** The alert's audit row names the record that raised it, for `lookout explain <alert>`. */
export const namingSource = (alert: AlertItem, source: string): AlertItem =>
  alert.row && source ? { ...alert, row: { ...alert.row, source } } : alert;

/** Counts an alert this poll raised (pending or suppressed) and tells `onAlert`. */
export function countAlert({ deps, result }: PollContext, alert: AlertItem): void {
  if (alert.suppression) result.suppressed++;
  else result.alerts++;
  deps.onAlert?.(alert.detail, alert.suppression);
}

/** Items a list answer rejected count into the result and are set aside. */
export async function takeRejected(poll: PollContext, rejected: RejectedItem[]): Promise<void> {
  poll.result.rejected += rejected.length;
  await setAsideRejected(poll, rejected);
}

/**
 * Items that do not match the spec are not stored as records: they stay unseen (a fixed item is read
 * and stored next time), and each is quarantined once with where it breaks the spec, so it is explained
 * (`lookout audit --type quarantine`, one health event) rather than skipped in silence at every poll.
 */
async function setAsideRejected({ deps, result }: PollContext, rejected: RejectedItem[]) {
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

/** The audit filters a record of this source can be found by. */
export function sourceRefs(src: SourceRef): QuarantineEntry["refs"] {
  if (src.kind === "webhook") return { webhook: { id: src.id } };
  if (src.kind === "cluster") return { cluster: { id: src.id } };
  return { service: { id: src.id } };
}

/** Sets aside a record DynamoDB refuses; a health event says so once (lib/alerts/quarantine.ts). */
export async function quarantineRecord(
  { deps, result }: PollContext, refusal: RecordUnwritable,
  thing: Pick<QuarantineEntry, "kind" | "id" | "organization" | "content" | "refs">,
) {
  const reason = refusal.message;
  await setAside(deps.store, { ...thing, stage: "ingest", source: result.source, reason }, deps.now());
  result.quarantined = (result.quarantined ?? 0) + 1;
  deps.log.error("record quarantined: it cannot be stored; the records beside it were", {
    source: result.source, kind: thing.kind, id: thing.id.slice(0, 200), reason: reason.slice(0, 500),
  });
}

/** Whether this poll may send `requests` more; never without a budget to ask (`PollDeps.spare`). */
export async function hasSpare(poll: PollContext, requests: number): Promise<boolean> {
  const spare = poll.deps.spare;
  return !!spare && spare.room(requests + Math.max(0, poll.result.requests - 1));
}
