/**
 * Receivers from the configuration → channels: secret references resolved once, one Slack sender and
 * one email transport shared by all. The cloud gives SES; one machine SMTP (notify.email.smtp_url) or
 * `.eml` files.
 */
import type { Receiver } from "../routes/types.js";
import { receiverId, receiverLabel } from "../routes/receivers.js";
import type { Channel } from "./deliver.js";
import { emailChannel, slackChannel } from "./channels.js";
import type { EmailTransport, SlackSender } from "./types.js";

export interface ReceiverRuntime {
  resolveSecret(ref: string): Promise<string>;
  slack: SlackSender;
  email?: { from: string; transport: EmailTransport };
}

export function channelResolver(rt: ReceiverRuntime): (r: Receiver) => Promise<Channel> {
  const cache = new Map<string, Promise<Channel>>();
  return (r) => {
    const id = receiverId(r);
    let channel = cache.get(id);
    if (!channel) {
      channel = build(r, id, rt);
      cache.set(id, channel);
      channel.catch(() => cache.delete(id)); // a secret that failed to resolve is tried again next time
    }
    return channel;
  };
}

async function build(r: Receiver, id: string, rt: ReceiverRuntime): Promise<Channel> {
  const who = { id, label: receiverLabel(r) };
  if (r.type === "slack") {
    const target = r.form === "webhook"
      ? { kind: "webhook" as const, url: await rt.resolveSecret(r.webhookUrlRef) }
      : { kind: "api" as const, token: await rt.resolveSecret(r.tokenRef), channel: r.channel };
    return slackChannel(who, target, rt.slack);
  }
  if (!rt.email) throw new Error(`${who.label}: no email sender configured (notify.email.from)`);
  return emailChannel(who, { from: rt.email.from, to: r.to }, rt.email.transport);
}
