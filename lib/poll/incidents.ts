/**
 * Incidents of webhook targets and clusters (docs/events.md, "Incidents"): the fold of a poll's fresh
 * records into a subject's incident state. Pure and deterministic from (stored state, records), so a
 * re-read after a crash, or a racing poller, decides the same: the same alerts with the same ids.
 *
 * - A failure with nothing open opens an incident under its own alert; a failure while open joins it
 *   (counted, flagged `repeat` when its status and error are the previous failure's).
 * - A success (a 2xx delivery to the target; a cluster's successful step) closes what is open.
 * - Clusters also close when no failure came for the quiet period: between two records (by the platform's
 *   times), or at a poll (by when Lookout saw the last failure: a skewed platform clock closes nothing early).
 * - An incident all of whose alerts stayed quiet (history at first sight) closes without an alert.
 * - Records at or before the watermark (the last record folded) were folded already, or came late: a late
 *   failure joins what is open without changing the state; a late success closes nothing.
 */
import type { IncidentFacts } from "../model/event.js";
import { formatDuration } from "../config/duration.js";
import { closedIncident } from "../alerts/build.js";
import { type Instant, compareInstants } from "../model/time.js";
import type { IncidentState, OpenIncident } from "../model/transitions.js";

/** A fresh record as the fold sees it. */
export interface IncidentRecord {
  id: string;
  /** When it happened (its sort key with `id`). */
  at: Instant;
  /** `at` as the ISO instant alerts carry. */
  occurredAt: string;
  outcome: "failure" | "success" | "neutral";
  /** A failure's alert id: the incident's id when it opens one. */
  alertId?: string;
  /** A failure's status and error: the same as the previous failure's makes it a repeat. */
  signature?: string;
  /** A failure's project, environment and service: kept when it opens, for the closing alert. */
  refs?: OpenIncident["refs"];
  /** A success: what ended the incident, for people ("HTTP 200 to hooks.acme.io", "step Created"). */
  resolvedBy?: string;
  /** A failure whose alert stays quiet (older than the backfill window): history, not news. */
  history?: boolean;
}

/** What a record is in its subject's incident. */
export type IncidentDecision =
  | { role: "opens" | "joins"; incident_id: string; incident: IncidentFacts }
  | ({ role: "closes" } & QuietClose);

/** An incident that closes; by its quiet period, no record closes it and its alert is raised on its own. */
export interface QuietClose {
  incident_id: string;
  incident: IncidentFacts;
  closed_at: string;
  refs?: OpenIncident["refs"];
  /** Every alert of the incident stayed quiet (history): its close raises none either. */
  history?: boolean;
}

export interface IncidentFold {
  /** The state after the fold (same version as read: the store sets the next). */
  state: IncidentState;
  /** Whether the incident changed (opened, joined, closed): the state is to be saved. */
  changed: boolean;
  /** By record id; records that neither open, join nor close have none. */
  decisions: Map<string, IncidentDecision>;
  quietCloses: QuietClose[];
}

export interface FoldOptions {
  /** Clusters: an incident with no failure for this long closes; absent for webhook targets. */
  quietMs?: number;
  /** Now, when the fresh records were seen and the quiet period at the poll is checked (epoch ms). */
  nowMs?: number;
  /** Later records of the answer wait for the next chunk: the quiet period at the poll waits for them. */
  more?: boolean;
}

/** Records in the order they are folded: by occurred instant, then id. */
export const byOccurrence = (a: { at: Instant; id: string }, b: { at: Instant; id: string }): number =>
  compareInstants(a.at, b.at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function foldIncident(prev: IncidentState, records: IncidentRecord[], opts: FoldOptions = {}): IncidentFold {
  const subject = prev.subject;
  let open = prev.open;
  let watermark = prev.watermark;
  const decisions = new Map<string, IncidentDecision>();
  const quietCloses: QuietClose[] = [];
  /** A record after the watermark opened, joined or closed. */
  let decided = false;
  const seenAt = opts.nowMs === undefined ? undefined : new Date(opts.nowMs).toISOString();
  const closing = (o: OpenIncident, closed_at: string, resolvedBy: string | undefined) => ({
    incident_id: o.incident_id, closed_at, refs: o.refs, ...(o.history ? { history: true } : {}),
    incident: closedIncident({ subject, opened_at: o.opened_at, failures: o.failures }, closed_at, resolvedBy),
  });
  /** Closes what is open when `quiet` (a time on the clock of `since`) is a quiet period after the last failure. */
  const closeIfQuiet = (since: (o: OpenIncident) => string | undefined, quiet: number) => {
    const from = open && opts.quietMs !== undefined ? since(open) : undefined;
    if (!open || from === undefined || quiet < Date.parse(from) + opts.quietMs!) return;
    quietCloses.push(closing(open, new Date(Date.parse(open.last_failure_at) + opts.quietMs!).toISOString(), `quiet for ${formatDuration(opts.quietMs!)}`));
    open = undefined;
  };

  for (const r of [...records].sort(byOccurrence)) {
    if (watermark && byOccurrence(r, watermark) <= 0) {
      // Folded already (a re-read), or late: a late failure joins what is open, uncounted.
      if (r.outcome === "failure" && open) {
        decisions.set(r.id, { role: "joins", incident_id: open.incident_id, incident: { subject, opened_at: open.opened_at, failures: open.failures } });
      }
      continue;
    }
    watermark = { at: r.at, id: r.id };
    // Between two records, the platform's clock on both sides.
    closeIfQuiet((o) => o.last_failure_at, r.at.ms);
    if (r.outcome === "failure" || (r.outcome === "success" && open)) decided = true;
    if (r.outcome === "failure") {
      const signature = r.signature ?? "";
      const last = { last_failure_at: r.occurredAt, ...(seenAt ? { last_failure_seen_at: seenAt } : {}), last_signature: signature };
      if (!open) {
        const incident_id = r.alertId ?? r.id;
        open = { incident_id, opened_at: r.occurredAt, failures: 1, ...last, ...(r.refs ? { refs: r.refs } : {}), ...(r.history ? { history: true } : {}) };
        decisions.set(r.id, { role: "opens", incident_id, incident: { subject, opened_at: r.occurredAt, failures: 1 } });
      } else {
        const repeat = signature === open.last_signature;
        const { history: _wasHistory, ...live } = open;
        // An incident stays history while all its alerts are: one alerted failure makes it live.
        open = { ...(r.history ? open : live), failures: open.failures + 1, ...last };
        decisions.set(r.id, {
          role: "joins", incident_id: open.incident_id,
          incident: { subject, opened_at: open.opened_at, failures: open.failures, ...(repeat ? { repeat } : {}) },
        });
      }
    } else if (r.outcome === "success" && open) {
      decisions.set(r.id, { role: "closes", ...closing(open, r.occurredAt, r.resolvedBy) });
      open = undefined;
    }
  }
  // At the poll, Lookout's clock on both sides: a platform clock behind Lookout's does not close at once.
  if (opts.nowMs !== undefined && !opts.more) closeIfQuiet((o) => o.last_failure_seen_at, opts.nowMs);

  // Saved when a record opened, joined or closed: a fold that decided nothing decides the same when run again.
  const changed = decided || quietCloses.length > 0;
  const state: IncidentState = compactState({ subject, version: prev.version, open, watermark: changed ? watermark : prev.watermark });
  return { state, changed, decisions, quietCloses };
}

function compactState(s: IncidentState): IncidentState {
  return { subject: s.subject, version: s.version, ...(s.open ? { open: s.open } : {}), ...(s.watermark ? { watermark: s.watermark } : {}) };
}
