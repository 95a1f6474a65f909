/**
 * Receivers from the configuration → channels: secret references resolved when a channel is built (and
 * again after the receiver refused a send for good), one Slack sender and
 * one email transport shared by all. The cloud gives SES; one machine SMTP (notify.email.smtp_url) or
 * `.eml` files.
 */
import type { Receiver } from "../config/route-types.js";
import { receiverId, receiverLabel } from "../config/receivers.js";
import type { Channel } from "./deliver.js";
import type { HttpChannelBuilder } from "./http-channels.js";
import type { slackChannel } from "./slack/channel.js";
import type { emailChannel } from "./email/channel.js";
import { DeliveryError, type EmailTransport, type SlackSender } from "./types.js";
import { ConfigError } from "../config/error.js";

export interface ReceiverRuntime {
  resolveSecret(ref: string): Promise<string>;
  slack: SlackSender;
  /** Slack actions are configured (notify.slack_actions): incident messages of the Web API form carry buttons. */
  slackActions?: boolean;
  email?: { from: string; transport: EmailTransport };
  /**
   * Builds PagerDuty, webhook and Teams channels (lib/notify/http-channels.ts httpChannels), given only
   * where such receivers are delivered (one machine, the notify-http function): the other functions'
   * bundles then leave their code out.
   */
  httpChannel?: HttpChannelBuilder;
  /**
   * The Slack and email channels this process sends to on every message (lib/notify/slack/channel.ts,
   * email/channel.ts), imported where it is composed. A kind not given is one it reaches only through
   * `notify.fallback` (the HTTP function, the Slack function's email fallback): its channel and renderer
   * are loaded when its first receiver is built, so no cold start loads them for a fallback that rarely sends.
   */
  channels?: { slack?: typeof slackChannel; email?: typeof emailChannel };
}

/**
 * A receiver that cannot be built (its secret does not resolve, no email sender) still becomes a
 * channel: one whose every send fails with why, so the failure is a delivery like any other —
 * recorded, sent to the fallback, raised as health — and never an exception in the bus subscriber.
 */
export function channelResolver(rt: ReceiverRuntime): (r: Receiver) => Promise<Channel> {
  const cache = new Map<string, Promise<Channel>>();
  return async (r) => {
    const id = receiverId(r);
    let channel = cache.get(id);
    if (!channel) {
      const built: Promise<Channel> = build(r, id, rt).then((ch) => rebuiltAfterRefusal(ch, () => cache.get(id) === built && cache.delete(id)));
      channel = built;
      cache.set(id, channel);
    }
    try {
      return await channel;
    } catch (err) {
      cache.delete(id); // a secret that failed to resolve is tried again next time
      return unavailableChannel({ id, label: receiverLabel(r) }, err);
    }
  };
}

/**
 * A send the receiver refused for good (an invalid or revoked Slack token, a webhook removed) forgets the
 * channel, so that the next message builds it again and reads its secrets again: a token rotated in the
 * store reaches a running process (docs/deploy.md, "Secrets"). A retryable failure keeps it.
 */
function rebuiltAfterRefusal(ch: Channel, forget: () => void): Channel {
  const refused = (err: unknown) => {
    if (err instanceof DeliveryError && !err.retryable) forget();
    throw err;
  };
  return {
    ...ch,
    send: (...args) => ch.send(...args).catch(refused),
    sendDigest: (...args) => ch.sendDigest(...args).catch(refused),
    ...(ch.sendEscalation ? { sendEscalation: (...args: Parameters<NonNullable<Channel["sendEscalation"]>>) => ch.sendEscalation!(...args).catch(refused) } : {}),
  };
}

/** A configuration problem (a secret missing or empty, no sender) needs a person; anything else may pass. */
function unavailableChannel(who: { id: string; label: string }, cause: unknown): Channel {
  const permanent = cause instanceof ConfigError || cause instanceof DeliveryError;
  const error = () => new DeliveryError(`${who.label} is unavailable: ${(cause as Error).message}`, !permanent, undefined, undefined, "receiver_unavailable");
  return {
    ...who,
    send: async () => Promise.reject(error()),
    sendDigest: async () => Promise.reject(error()),
  };
}

/** `broadcastResolution: false` on a Slack receiver keeps an incident's closing reply in its thread. */
const broadcastOf = (r: Receiver): { broadcastResolution?: boolean } => {
  const b = (r as { broadcastResolution?: unknown }).broadcastResolution;
  return typeof b === "boolean" ? { broadcastResolution: b } : {};
};

async function build(r: Receiver, id: string, rt: ReceiverRuntime): Promise<Channel> {
  const who = { id, label: receiverLabel(r) };
  if (r.type === "slack") {
    const target = r.form === "webhook"
      ? { kind: "webhook" as const, url: await rt.resolveSecret(r.webhookUrlRef) }
      : { kind: "api" as const, token: await rt.resolveSecret(r.tokenRef), channel: r.channel, ...broadcastOf(r), ...(rt.slackActions ? { actions: true } : {}) };
    return (rt.channels?.slack ?? (await import("./slack/channel.js")).slackChannel)(who, target, rt.slack);
  }
  if (r.type !== "email") {
    if (!rt.httpChannel) throw new DeliveryError(`this process was built without the ${r.type} receivers`, false);
    return rt.httpChannel(r, who, rt.resolveSecret);
  }
  if (!rt.email) throw new DeliveryError("no email sender configured (notify.email.from)", false);
  const emailChannel = rt.channels?.email ?? (await import("./email/channel.js")).emailChannel;
  return emailChannel(who, { from: rt.email.from, to: r.to }, rt.email.transport);
}
