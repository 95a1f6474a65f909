/**
 * Receivers as `Channel`s of the delivery core: a Slack target with its sender, an email address list
 * with its transport. Which message form a follow-up takes is decided here: a thread reply where Slack
 * allows one (Web API, first message's ts known), else a fresh message quoting the first alert.
 */
import type { LookoutEventDetail } from "../model/event.js";
import type { Channel, Sent } from "./deliver.js";
import { type EmailTransport, type IncidentRef, type SlackMessage, type SlackSender, type SlackTarget, SLACK_ALERT_EVENT } from "./types.js";
import { renderSlackAlert, renderSlackDigest } from "./slack/render.js";
import { renderEmail, renderEmailDigest } from "./email/render.js";

export interface ChannelIdentity {
  id: string;
  label: string;
}

/** The thread a message goes in: the first alert's ts, where Slack allows replies (Web API form). */
const threadOf = (target: SlackTarget, incident?: IncidentRef) => (target.kind === "api" ? incident?.ts : undefined);

export function slackMessageFor(detail: LookoutEventDetail, target: SlackTarget, incident?: IncidentRef): SlackMessage {
  if (!incident) return renderSlackAlert(detail);
  const thread_ts = threadOf(target, incident);
  if (thread_ts) return { ...renderSlackAlert(detail, { incident, mode: "thread" }), thread_ts };
  return renderSlackAlert(detail, { incident, mode: "quote" });
}

/** Web API messages carry the alert id, so a successor can find what a dead sender posted. */
const marked = (message: SlackMessage, target: SlackTarget, alertId: string): SlackMessage =>
  target.kind === "api" ? { ...message, metadata: { event_type: SLACK_ALERT_EVENT, event_payload: { alert_id: alertId } } } : message;

export function slackChannel(who: ChannelIdentity, target: SlackTarget, sender: SlackSender): Channel {
  const channel: Channel = {
    ...who,
    async send(detail, incident) {
      return (await sender.post(target, marked(slackMessageFor(detail, target, incident), target, detail.id))) as Sent;
    },
    async sendDigest(held, window) {
      const message = renderSlackDigest(held, {
        channelLabel: who.label, from: window.from, to: window.to, heldAt: window.heldAt, sentAt: window.at,
      });
      return (await sender.post(target, marked(message, target, window.id))) as Sent;
    },
  };
  // Incoming webhooks cannot be read back: there, a send the sender died in may be repeated.
  if (target.kind === "api") {
    channel.findSent = async (alertId, since, incident) =>
      sender.findPosted(target, { alertId, sinceMs: since.getTime(), ...(incident?.ts ? { threadTs: incident.ts } : {}) });
  }
  return channel;
}

export function emailChannel(who: ChannelIdentity, address: { from: string; to: string[] }, transport: EmailTransport): Channel {
  return {
    ...who,
    async send(detail, incident) {
      const message = renderEmail(detail, {
        ...address,
        ...(incident ? { incident } : {}),
        ...(incident?.messageId ? { firstMessageId: incident.messageId } : {}),
      });
      return { messageId: (await transport.send(message)).messageId };
    },
    async sendDigest(held, window) {
      const message = renderEmailDigest(held, {
        ...address, since: window.from, until: window.to, label: who.label, heldAt: window.heldAt, sentAt: window.at,
      });
      return { messageId: (await transport.send(message)).messageId };
    },
  };
}
