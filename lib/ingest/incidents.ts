/**
 * Incidents of webhook targets and clusters (docs/events.md, "Incidents"): the fold of a poll's fresh
 * records into a subject's incident state. Pure and deterministic from (stored state, records), so a
 * re-read after a crash, or a racing poller, decides the same: the same alerts with the same ids.
 *
 * - A failure with nothing open opens an incident under its own alert; a failure while open joins it
 *   (counted, flagged `repeat` when its status and error are the previous failure's).
 * - A success (a 2xx delivery to the target; a cluster's successful step) closes what is open.
 * - Clusters also close when no failure came for the quiet period: between two records, or at the poll.
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
}

/** What a record is in its subject's incident. */
export type IncidentDecision =
  | { role: "opens" | "joins"; incident_id: string; incident: IncidentFacts }
  | { role: "closes"; incident_id: string; incident: IncidentFacts; closed_at: string; refs?: OpenIncident["refs"] };

/** An incident closed by its quiet period: no record closes it, so its alert is raised on its own. */
export interface QuietClose {
  incident_id: string;
  incident: IncidentFacts;
  closed_at: string;
  refs?: OpenIncident["refs"];
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
  /** Now, for the quiet period at the poll (epoch ms). */
  nowMs?: number;
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

  const closeQuietlyBefore = (ms: number) => {
    if (!open || opts.quietMs === undefined) return;
    const closedMs = Date.parse(open.last_failure_at) + opts.quietMs;
    if (ms < closedMs) return;
    const closed_at = new Date(closedMs).toISOString();
    quietCloses.push({ incident_id: open.incident_id, incident: closedIncident({ subject, opened_at: open.opened_at, failures: open.failures }, closed_at, `quiet for ${formatDuration(opts.quietMs)}`), closed_at, refs: open.refs });
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
    closeQuietlyBefore(r.at.ms);
    if (r.outcome === "failure" || (r.outcome === "success" && open)) decided = true;
    if (r.outcome === "failure") {
      const signature = r.signature ?? "";
      if (!open) {
        const incident_id = r.alertId ?? r.id;
        open = { incident_id, opened_at: r.occurredAt, failures: 1, last_failure_at: r.occurredAt, last_signature: signature, ...(r.refs ? { refs: r.refs } : {}) };
        decisions.set(r.id, { role: "opens", incident_id, incident: { subject, opened_at: r.occurredAt, failures: 1 } });
      } else {
        const repeat = signature === open.last_signature;
        open = { ...open, failures: open.failures + 1, last_failure_at: r.occurredAt, last_signature: signature };
        decisions.set(r.id, {
          role: "joins", incident_id: open.incident_id,
          incident: { subject, opened_at: open.opened_at, failures: open.failures, ...(repeat ? { repeat } : {}) },
        });
      }
    } else if (r.outcome === "success" && open) {
      const incident = closedIncident({ subject, opened_at: open.opened_at, failures: open.failures }, r.occurredAt, r.resolvedBy);
      decisions.set(r.id, { role: "closes", incident_id: open.incident_id, incident, closed_at: r.occurredAt, refs: open.refs });
      open = undefined;
    }
  }
  if (opts.nowMs !== undefined) closeQuietlyBefore(opts.nowMs);

  // Saved when a record opened, joined or closed: a fold that decided nothing decides the same when run again.
  const changed = decided || quietCloses.length > 0;
  const state: IncidentState = compactState({ subject, version: prev.version, open, watermark: changed ? watermark : prev.watermark });
  return { state, changed, decisions, quietCloses };
}

function compactState(s: IncidentState): IncidentState {
  return { subject: s.subject, version: s.version, ...(s.open ? { open: s.open } : {}), ...(s.watermark ? { watermark: s.watermark } : {}) };
}
