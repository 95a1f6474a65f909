/**
 * A Slack receiver as a `Channel` of the delivery core. Which message form an event takes is decided here
 * (docs/events.md, "Incidents"):
 *  - a follow-up: a thread reply where Slack allows one (Web API, first message's ts known), else a
 *    fresh message quoting the first alert;
 *  - a repeat (Web API, in a thread): one short counted reply; elsewhere the delivery core suppresses it;
 *  - a closing event (Web API, in a thread): the first message updated in place to its resolved form,
 *    then the closing reply, broadcast to the channel unless the receiver says not to;
 *  - an amendment (Web API, the amended alert's own message known): that message updated in place with
 *    what the amendment adds; elsewhere a follow-up.
 */
import { isClosing, type LookoutEventDetail } from "../../model/event.js";
import {
  type Channel,
  type ChannelIdentity,
  digestLinksOf,
  type IncidentRef,
  plainPresentation,
  type Presentation,
  type Sent,
  type SlackMessage,
  type SlackSender,
  type SlackTarget,
  SLACK_ALERT_EVENT,
} from "../types.js";
import { type IncidentActions, renderSlackAlert, renderSlackDigest, renderSlackEscalation, renderSlackRepeat, renderSlackResolved } from "./render.js";
import { changesView } from "../view/alert.js";

/** The thread a message goes in: the first alert's ts, where Slack allows replies (Web API form). */
const threadOf = (target: SlackTarget, incident?: IncidentRef) => (target.kind === "api" ? incident?.ts : undefined);

/** The buttons of the message that stands for an incident here (Web API form, Slack actions configured). */
const actionsOf = (detail: LookoutEventDetail, target: SlackTarget, acknowledged?: IncidentActions["acknowledged"]): { incidentActions?: IncidentActions } =>
  target.kind === "api" && target.actions && detail.incident_id ? { incidentActions: { incidentId: detail.incident_id, ...(acknowledged ? { acknowledged } : {}) } } : {};

export function slackMessageFor(detail: LookoutEventDetail, target: SlackTarget, incident?: IncidentRef, presentation?: Presentation): SlackMessage {
  const p = presentation ? { presentation } : {};
  // No incident shown here: this message stands for it (the opening, or a follow-up in its place).
  if (!incident) return renderSlackAlert(detail, { ...p, ...actionsOf(detail, target) });
  const thread_ts = threadOf(target, incident);
  if (thread_ts) {
    if (detail.incident?.repeat) return { ...renderSlackRepeat(detail), thread_ts };
    const reply: SlackMessage = { ...renderSlackAlert(detail, { ...p, incident, mode: "thread" }), thread_ts };
    // The closing reply is also shown in the channel, unless the receiver says not to.
    if (isClosing(detail.transition) && target.kind === "api" && target.broadcastResolution !== false) reply.reply_broadcast = true;
    return reply;
  }
  return renderSlackAlert(detail, { ...p, incident, mode: "quote" });
}

/** Web API messages carry the alert id, so a successor can find what a dead sender posted. */
const marked = (message: SlackMessage, target: SlackTarget, alertId: string): SlackMessage =>
  target.kind === "api" ? { ...message, metadata: { event_type: SLACK_ALERT_EVENT, event_payload: { alert_id: alertId } } } : message;

/**
 * The message an event replaces in place (Web API form), and with what: an incident's first message in
 * its resolved form, or an amended alert's message with the amendment's changes. It keeps the id of
 * the alert it was posted for, so reading back still finds it. Undefined: nothing to update.
 */
export function slackUpdateFor(
  detail: LookoutEventDetail,
  incident: IncidentRef | undefined,
  presentation?: Presentation,
  target?: SlackTarget,
): { alertId: string; ts: string; channel?: string; message: SlackMessage } | undefined {
  const amended = incident?.amended;
  if (detail.amends && amended?.ts) {
    const p = presentation ?? plainPresentation(amended.alert);
    const changes = changesView(detail);
    // The amended message keeps its buttons when it stands for the incident here.
    const standsFor = !incident?.shown || incident.ts === amended.ts;
    const message = renderSlackAlert(amended.alert, { presentation: p, ...(changes ? { changes } : {}), ...(target && standsFor ? actionsOf(amended.alert, target, incident?.acknowledged) : {}) });
    return { alertId: amended.alert.id, ts: amended.ts, ...(amended.channel ? { channel: amended.channel } : {}), message };
  }
  if (isClosing(detail.transition) && incident?.ts && !incident.inDigest) {
    // The receiver's root: the opening, or the follow-up that stood in for it there.
    const root = incident.root ?? incident.first;
    const changes = incident.changes && !incident.root ? changesView(incident.changes) : undefined;
    const message = renderSlackResolved(root, detail, presentation, changes, incident.acknowledged);
    return { alertId: root.id, ts: incident.ts, ...(incident.channel ? { channel: incident.channel } : {}), message };
  }
  return undefined;
}

export function slackChannel(who: ChannelIdentity, target: SlackTarget, sender: SlackSender): Channel {
  const channel: Channel = {
    ...who,
    ...(sender.onlooker ? { onlooker: true } : {}),
    async send(detail, incident, presentation) {
      let updated: Sent["updated"];
      if (target.kind === "api") {
        const update = slackUpdateFor(detail, incident, presentation, target);
        if (update) {
          // chat.update is idempotent: a retry after it succeeded replaces the message with the same one.
          const at = { channel: update.channel ?? target.channel, ts: update.ts };
          const done = await sender.update(target, at, marked(update.message, target, update.alertId));
          updated = { ts: done.ts ?? at.ts, channel: done.channel ?? at.channel };
          // An amendment says everything in the message it updated: nothing more is posted.
          if (detail.amends) return { updated };
        }
      }
      const posted = (await sender.post(target, marked(slackMessageFor(detail, target, incident, presentation), target, detail.id))) as Sent;
      return updated ? { ...posted, updated } : posted;
    },
    async sendEscalation(notice, incident, presentation) {
      const thread_ts = threadOf(target, incident);
      const message = renderSlackEscalation(notice.first, notice.after, { presentation, thread: !!thread_ts });
      // In the thread and shown in the channel: the escalation is for everyone there to see.
      const placed: SlackMessage = thread_ts ? { ...message, thread_ts, reply_broadcast: true } : message;
      return (await sender.post(target, marked(placed, target, notice.id))) as Sent;
    },
    async sendDigest(held, window, presentationOf) {
      const message = renderSlackDigest(held, {
        // Where it is read: the channel's name (Web API form), or "this channel" where only the webhook's secret names it.
        channelLabel: target.kind === "api" ? target.channel : "this channel", from: window.from, to: window.to, heldAt: window.heldAt, sentAt: window.at, ...digestLinksOf(presentationOf),
        ...(presentationOf ? { presentationOf } : {}),
      });
      return (await sender.post(target, marked(message, target, window.id))) as Sent;
    },
  };
  // Incoming webhooks cannot be read back: there, a send the sender died in may be repeated.
  if (target.kind === "api") {
    channel.threads = true;
    channel.findSent = async (alertId, since, incident) =>
      sender.findPosted(target, { alertId, sinceMs: since.getTime(), ...(incident?.ts ? { threadTs: incident.ts } : {}) });
  }
  return channel;
}
