/**
 * Receivers as `Channel`s of the delivery core: a Slack target with its sender, an email address list
 * with its transport. Which message form a follow-up takes is decided here: a thread reply where Slack
 * allows one (Web API, first message's ts known), else a fresh message quoting the first alert.
 */
import type { LookoutEventDetail } from "../alerts/event.js";
import type { Channel, Sent } from "./deliver.js";
import type { EmailTransport, IncidentRef, SlackMessage, SlackSender, SlackTarget } from "./types.js";
import { renderSlackAlert, renderSlackDigest } from "./slack/render.js";
import { renderEmail, renderEmailDigest } from "./email/render.js";

export interface ChannelIdentity {
  id: string;
  label: string;
}

export function slackMessageFor(detail: LookoutEventDetail, target: SlackTarget, incident?: IncidentRef): SlackMessage {
  if (!incident) return renderSlackAlert(detail);
  if (target.kind === "api" && incident.ts) {
    return { ...renderSlackAlert(detail, { incident, mode: "thread" }), thread_ts: incident.ts };
  }
  return renderSlackAlert(detail, { incident, mode: "quote" });
}

export function slackChannel(who: ChannelIdentity, target: SlackTarget, sender: SlackSender): Channel {
  return {
    ...who,
    async send(detail, incident) {
      const posted = await sender.post(target, slackMessageFor(detail, target, incident));
      return posted as Sent;
    },
    async sendDigest(held, window) {
      return (await sender.post(target, renderSlackDigest(held, { channelLabel: who.label, from: window.from, to: window.to }))) as Sent;
    },
  };
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
      const message = renderEmailDigest(held, { ...address, since: window.from, until: window.to, label: who.label });
      return { messageId: (await transport.send(message)).messageId };
    },
  };
}
