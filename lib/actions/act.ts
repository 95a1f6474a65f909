/**
 * Acting on a click (docs/actions.md): each click is recorded once (Slack retries a request it got no
 * answer to within three seconds, and a replay carries the same click), then
 *  - Acknowledge: the first person to press it is recorded as looking; the incident's message says so
 *    (edited in place, its Acknowledge button gone) and a reply in its thread tells the channel. A later
 *    press changes nothing: the first acknowledgement stands.
 *  - Mute 1h / Mute until resolved: the scoped mute `lookout mute` would create — the incident's
 *    service in its environment, or its cluster, or its webhook — with who set it and why, and a reply
 *    in the thread that says what is muted until when. "Until resolved" is lifted by the incident's close.
 * Decisions are pure (`muteFor`, `clickId`); the store and Slack are ports.
 */
import { contentHash } from "../model/hash.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { IncidentActionRecord, Mute, MuteScope, NotifyStore } from "../model/notify-store.js";
import type { Log } from "../model/log.js";
import type { Presentation, SlackSender, SlackTarget } from "../notify/types.js";
import { renderSlackAlert, renderSlackResolved } from "../notify/slack/render.js";
import { describeScope } from "../notify/mutes.js";
import { changesView, escapeSlack, oneLine } from "../notify/view/index.js";
import { changesAlertId } from "../alerts/changes-listed.js";
import { actionRow } from "../model/audit-row.js";
import type { IncidentActionRequest } from "./slack-payload.js";

/** How long "Mute 1h" mutes; "Mute until resolved" mutes this long at most, if the incident never closes. */
export const MUTE_FOR_MS = 3_600_000;
export const MUTE_UNTIL_RESOLVED_MAX_MS = 7 * 86_400_000;

export type ActionOutcome =
  | { outcome: "acknowledged"; by: string }
  | { outcome: "already_resolved"; at: string }
  | { outcome: "already_acknowledged"; by: string }
  | { outcome: "muted"; mute: Mute }
  | { outcome: "duplicate" }
  | { outcome: "unknown_alert" }
  | { outcome: "no_receiver" };

/** The Web API receiver that showed the alert in that channel, with how its route presents it. */
export interface ShownBy {
  target: SlackTarget & { kind: "api" };
  presentation?: Presentation;
}

export interface ActionPorts {
  store: Pick<NotifyStore, "recordAction" | "getAction" | "acknowledge" | "putMute" | "getAlert" | "getClosed">;
  slack: SlackSender;
  /** Which configured receiver posted the clicked message of this alert; undefined when none did. */
  shownBy(alert: LookoutEventDetail, channelId: string): Promise<ShownBy | undefined>;
  now: () => Date;
  log: Log;
}

/** One click, however often Slack sends it: who, which button, on which incident, at Slack's time. */
export const clickId = (r: IncidentActionRequest): string => contentHash("click", r.team ?? "", r.user.id, r.actionTs, r.kind, r.incidentId, r.alertId);

/** What a mute from this incident's message covers: its service in its environment, or its cluster, or its webhook. */
export function muteScopeOf(detail: LookoutEventDetail): MuteScope {
  const scope: MuteScope = { organization: detail.organization.id };
  if (detail.kind === "cluster_log" && detail.cluster) return { ...scope, cluster: detail.cluster.id };
  if (detail.kind === "webhook_delivery" && detail.webhook) return { ...scope, webhook: detail.webhook.id };
  if (detail.service) scope.service = detail.service.id;
  if (detail.environment) scope.environment = detail.environment.id;
  return scope;
}

/** The mute a button asks for, set now by the person who clicked. */
export function muteFor(r: IncidentActionRequest, detail: LookoutEventDetail, now: Date, id: string): Mute {
  const untilResolved = r.kind === "mute_until_resolved";
  const ms = untilResolved ? MUTE_UNTIL_RESOLVED_MAX_MS : MUTE_FOR_MS;
  return {
    id, scope: muteScopeOf(detail), until: new Date(now.getTime() + ms).toISOString(),
    reason: `${untilResolved ? "until resolved" : "for an hour"}, from Slack: ${oneLine(detail.summary).slice(0, 200)}`,
    created_by: `slack:${r.user.id} (${oneLine(r.user.name).slice(0, 80)})`, created_at: now.toISOString(),
    ...(untilResolved ? { until_resolved: r.incidentId } : {}),
  };
}

export async function actOn(r: IncidentActionRequest, ports: ActionPorts): Promise<ActionOutcome> {
  const now = ports.now();
  const id = clickId(r);
  const record: IncidentActionRecord = {
    id, kind: r.kind, incident_id: r.incidentId, alert_id: r.alertId, by: r.user, at: now.toISOString(), channel: r.channel, message_ts: r.messageTs,
  };
  // Recorded once acted on, not before: a retry after a failure part-way does the rest (each step repeats safely).
  if (await ports.store.getAction(r.incidentId, id)) return { outcome: "duplicate" };
  const detail = await ports.store.getAlert(r.alertId);
  // Kept with what came of it. A click that did something (acknowledged, muted) is also an audit row of
  // the alert's service, environment, cluster or webhook (docs/audit.md); one that did nothing is not.
  const done = async <T extends ActionOutcome>(outcome: T): Promise<T> => {
    const acted = outcome.outcome === "acknowledged" || outcome.outcome === "muted";
    await ports.store.recordAction({ ...record, outcome: outcome.outcome }, acted && detail ? actionRow(record, detail) : undefined);
    return outcome;
  };
  if (!detail) {
    ports.log.warn("a click on an alert the table does not hold (expired, or not Lookout's); nothing done", { alert: r.alertId, click: id });
    return done({ outcome: "unknown_alert" });
  }
  const shown = await ports.shownBy(detail, r.channel);
  const who = `<@${r.user.id}>`;
  const at = { channel: r.channel, ts: r.messageTs };
  const reply = async (text: string) => {
    if (shown) await ports.slack.post(shown.target, { text, blocks: [{ type: "section", text: { type: "mrkdwn", text, verbatim: true } }], thread_ts: r.messageTs });
  };

  // Acknowledging or muting until resolved what has resolved (a message not yet redrawn, a stale client) does nothing but say so.
  const closedBefore = r.kind === "mute_1h" ? undefined : await ports.store.getClosed(r.incidentId);
  if (closedBefore) {
    await reply(`✅ This incident resolved at ${minute(closedBefore.at)} UTC: nothing to ${r.kind === "acknowledge" ? "acknowledge" : "mute until it resolves"}.`);
    return done({ outcome: "already_resolved", at: closedBefore.at });
  }

  if (r.kind === "acknowledge") {
    const { ack, first } = await ports.store.acknowledge({ incident_id: r.incidentId, by: r.user, at: now.toISOString(), alert_id: r.alertId, click_id: id });
    // This click's own acknowledgement, found by its retry, or the same person's whose click never finished
    // (every attempt failed after the acknowledgement was written; they click again): the edit and the
    // reply are finished. Anyone else's stands, and this click does nothing.
    const own = ack.click_id === id || (ack.by.id === r.user.id && !!ack.click_id && !(await ports.store.getAction(r.incidentId, ack.click_id)));
    if (!first && !own) return done({ outcome: "already_acknowledged", by: ack.by.id });
    if (!shown) return done({ outcome: "no_receiver" });
    // The message as it stands (what changed before the failure, if listed), now saying who is looking.
    // The changes amend the alert whose message this is (the opening, or the follow-up standing in for it).
    const listed = await ports.store.getAlert(changesAlertId(r.alertId));
    const changes = listed && changesView(listed);
    const message = renderSlackAlert(detail, {
      ...(shown.presentation ? { presentation: shown.presentation } : {}),
      ...(changes ? { changes } : {}),
      incidentActions: { incidentId: r.incidentId, acknowledged: { userId: r.user.id, at: ack.at } },
    });
    await ports.slack.update(shown.target, at, message);
    // The incident closed while this edit was on its way: its resolved form may now be under the open
    // one just drawn. Drawn again, resolved (the close's own edit, if it is still to come, draws the same).
    const closedSince = await ports.store.getClosed(r.incidentId);
    const closing = closedSince && (await ports.store.getAlert(closedSince.alert_id));
    if (closing) await ports.slack.update(shown.target, at, renderSlackResolved(detail, closing, shown.presentation, changes, { userId: ack.by.id, at: ack.at }));
    await reply(`👀 Acknowledged by ${who}: they are looking at it.`);
    return done({ outcome: "acknowledged", by: r.user.id });
  }

  // Its id is the click's: a retry writes the same mute again.
  const mute = muteFor(r, detail, now, `slack-${id}`);
  await ports.store.putMute(mute);
  // The incident closed while the mute was being written: its close may have read the mutes before this
  // one was there, and would never lift it. Lifted here, as the close would have.
  const closedSince = r.kind === "mute_until_resolved" ? await ports.store.getClosed(r.incidentId) : undefined;
  if (closedSince) {
    await ports.store.putMute({ ...mute, lifted_at: now.toISOString() });
    await reply(`✅ This incident resolved at ${minute(closedSince.at)} UTC, as it was being muted: nothing stays muted.`);
    return done({ outcome: "already_resolved", at: closedSince.at });
  }
  const until = r.kind === "mute_until_resolved" ? "until the incident resolves" : `until ${mute.until.slice(11, 16)} UTC`;
  await reply(`🔕 Muted ${escapeSlack(scopeWords(detail, mute.scope))} ${until}, by ${who}. Alerts are still recorded; \`lookout unmute ${mute.id}\` lifts it.`);
  return done({ outcome: "muted", mute });
}

/** `2026-03-02 14:09`: an ISO instant to the minute, for people. */
const minute = (iso: string) => iso.slice(0, 16).replace("T", " ");

/** What a mute from this alert covers, by the names the alert carries (ids where it has none). */
export function scopeWords(detail: LookoutEventDetail, scope: MuteScope): string {
  const named = (r: { id: string; name?: string } | undefined) => r && (r.name ? `${r.name}` : r.id);
  if (scope.cluster) return `cluster ${named(detail.cluster) ?? scope.cluster}`;
  if (scope.webhook) return `webhook ${named(detail.webhook) ?? scope.webhook}`;
  if (scope.service) return `${named(detail.service) ?? scope.service}${scope.environment ? ` in ${named(detail.environment) ?? scope.environment}` : ""}`;
  return describeScope(scope);
}
