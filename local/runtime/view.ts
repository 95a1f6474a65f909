/** The terminal view of a local run: one line per poll with news, per alert, per publish. */
import type { PollResult } from "../../lib/model/poll.js";
import type { Log } from "../../lib/model/log.js";
import { isClosing, type LookoutEventDetail } from "../../lib/model/event.js";
import type { Suppression } from "../../lib/model/alert-item.js";
import type { Delivery } from "../../lib/notify/notifier.js";
import { clip } from "../../lib/audit/output-formats.js";

const time = (d: Date) => d.toISOString().slice(11, 19);
const shortSource = (key: string) => key.replace(/:([0-9a-f]{8})[0-9a-f-]{28}\//, ":$1…/").replace(/\/([0-9a-f]{8})[0-9a-f-]{28}$/, "/$1…");

export function pollLine(r: PollResult, at: Date): string {
  const parts = [`${r.requests} req${r.retries ? ` (${r.retries} retries)` : ""}`, `${r.newRecords} new`];
  if (r.alerts) parts.push(`${r.alerts} alert${r.alerts > 1 ? "s" : ""}`);
  if (r.suppressed) parts.push(`${r.suppressed} quiet (backfill)`);
  if (r.inProgress) parts.push(`${r.inProgress} in progress`);
  if (r.backlog) parts.push(`${r.backlog} left for the next poll`);
  if (r.rejected) parts.push(`${r.rejected} skipped (bad items)`);
  if (r.gapSuspected) parts.push("possible gap");
  if (!r.ok) parts.push(`FAILED: ${r.error?.message ?? "unknown error"}`);
  return `${time(at)} poll  ${shortSource(r.source).padEnd(34)} ${parts.join(", ")}`;
}

export function alertLine(d: LookoutEventDetail, suppression: Suppression | undefined, at: Date): string {
  // A close is good news and an amendment adds to an alert already shown: neither reads as a new alarm.
  const tag = suppression ? `quiet (${suppression.reason})` : isClosing(d.transition) ? "RESOLVED" : d.amends ? "UPDATE" : d.severity.toUpperCase();
  return `${time(at)} ${tag.padEnd(8)} ${d.transition.padEnd(15)} ${d.summary}`;
}

/** Columns of an alert's summary on a notify line: cut with "…", so "HTTP 503" never reads as "HTTP 50". */
const NOTIFY_SUMMARY_WIDTH = 80;

export function deliveryLine(d: LookoutEventDetail, delivery: Delivery, at: Date, what: "notify" | "escalate" = "notify"): string {
  // A repeat is counted in its incident's thread, not muted: say so rather than "suppressed".
  const outcome = delivery.outcome === "suppressed" && d.incident?.repeat ? "repeat, counted" : delivery.outcome;
  return `${time(at)} ${what.padEnd(8)} ${outcome.padEnd(15)} ${delivery.receiver} (route ${delivery.route}): ${clip(d.summary, NOTIFY_SUMMARY_WIDTH)}`;
}

/** A logger for the terminal: warnings and errors on stderr, with their facts on one line. */
export function terminalLog(out: NodeJS.WritableStream = process.stderr, verbose = false): Log {
  const line = (level: string, message: string, extra?: Record<string, unknown>) =>
    out.write(`${level} ${message}${extra ? ` ${JSON.stringify(extra)}` : ""}\n`);
  return {
    info: (m, e) => verbose && line("info", m, e),
    warn: (m, e) => line("warn", m, e),
    error: (m, e) => line("error", m, e),
  };
}
