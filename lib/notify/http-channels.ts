/**
 * The HTTP receivers as `Channel`s of the delivery core (docs/receivers.md): PagerDuty's Events API v2,
 * a generic signed webhook, and Teams through a Workflows webhook. None keeps a thread or can be read
 * back, so, as for email, the delivery core suppresses repeats under a root they show, and a send the
 * sender died in may be repeated (PagerDuty folds it by dedup_key; the webhook's X-Lookout-Delivery
 * lets its receiver deduplicate; Teams shows it twice). Their messages are decided per incident state:
 *  - PagerDuty: trigger (opening, follow-up, amendment) or resolve (close) of the incident's dedup_key;
 *  - webhook: the event with its place in the incident (`incident.role`, `root_alert_id`);
 *  - Teams: a card; follow-ups, amendments and the close quote the incident's first alert.
 */
import type { HttpReceiver } from "../config/route-types.js";
import type { Channel } from "./deliver.js";
import type { ChannelIdentity } from "./types.js";
import { type HttpSender, httpSender } from "./http/post.js";
import { DeliveryError } from "./types.js";
import { renderPagerDutyDigest, renderPagerDutyEvent, type PagerDutyEvent } from "./pagerduty/render.js";
import { renderTeamsAlert, renderTeamsDigest } from "./teams/render.js";
import { renderWebhookAlert, renderWebhookDigest, signedHeaders } from "./webhook/render.js";

/** PagerDuty's documented endpoint; tests and a proxy give another base (LOOKOUT_PAGERDUTY_URL). */
export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com";

export interface PagerDutyTarget {
  routingKey: string;
  source?: string;
  /** Base URL, default PagerDuty's; the event goes to `<base>/v2/enqueue`. */
  baseUrl?: string;
}

export function pagerDutyChannel(who: ChannelIdentity, target: PagerDutyTarget, sender: HttpSender): Channel {
  const url = `${(target.baseUrl ?? PAGERDUTY_EVENTS_URL).replace(/\/+$/, "")}/v2/enqueue`;
  const enqueue = (event: PagerDutyEvent) => sender.post({ service: "PagerDuty", url, body: JSON.stringify({ routing_key: target.routingKey, ...event }), idempotent: true });
  const source = target.source ? { source: target.source } : {};
  return {
    ...who,
    // A resolve that overtakes its trigger is lost: a close waits behind its incident's held alerts.
    ordered: true,
    async send(detail, _incident, presentation) {
      const event = renderPagerDutyEvent(detail, { ...source, ...(presentation ? { presentation } : {}) });
      await enqueue(event);
      return { messageId: event.dedup_key };
    },
    async sendDigest(held, window, presentationOf) {
      // In order, one at a time: a key's trigger before its resolve. A retry sends them again, which
      // PagerDuty folds by dedup_key.
      for (const event of renderPagerDutyDigest(held, { ...source, digestId: window.id, ...(presentationOf ? { presentationOf } : {}) })) await enqueue(event);
      return {};
    },
  };
}

export interface WebhookTarget {
  url: string;
  signingSecret: string;
  now?: () => number;
}

export function webhookChannel(who: ChannelIdentity, target: WebhookTarget, sender: HttpSender): Channel {
  const now = target.now ?? Date.now;
  const post = (id: string, body: string) =>
    // Its receiver deduplicates by X-Lookout-Delivery, the same on every attempt (docs/receivers.md).
    sender.post({ service: "webhook", url: target.url, body, headers: () => signedHeaders(target.signingSecret, id, body, now()), idempotent: true });
  return {
    ...who,
    async send(detail, incident, presentation) {
      await post(detail.id, renderWebhookAlert(detail, incident, presentation));
      return {};
    },
    async sendDigest(held, window, presentationOf) {
      await post(window.id, renderWebhookDigest(held, window, presentationOf));
      return {};
    },
  };
}

export function teamsChannel(who: ChannelIdentity, target: { url: string }, sender: HttpSender): Channel {
  const post = (message: unknown) => sender.post({ service: "Teams", url: target.url, body: JSON.stringify(message) });
  return {
    ...who,
    async send(detail, incident, presentation) {
      await post(renderTeamsAlert(detail, { ...(incident ? { incident } : {}), ...(presentation ? { presentation } : {}) }));
      return {};
    },
    async sendDigest(held, window, presentationOf) {
      const links = presentationOf ? { links: (d: Parameters<typeof presentationOf>[0]) => presentationOf(d).links } : {};
      // Read in the channel the workflow posts to: never the workflow URL's secret reference.
      await post(renderTeamsDigest(held, { label: "this channel", from: window.from, to: window.to, ...(window.heldAt ? { heldAt: window.heldAt } : {}), ...(window.at ? { sentAt: window.at } : {}), ...links }));
      return {};
    },
  };
}

/** A PagerDuty, webhook or Teams channel for a receiver, its secrets resolved. */
export type HttpChannelBuilder = (r: HttpReceiver, who: ChannelIdentity, resolveSecret: (ref: string) => Promise<string>) => Promise<Channel>;

/** A resolved URL must be an absolute http(s) URL; the error names the reference, never the URL. */
function checkedUrl(url: string, ref: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) throw new DeliveryError(`${ref} does not hold an http(s) URL`, false);
  return url;
}

/** The HTTP receivers' channels, one sender shared (default: the shared retry policy); PagerDuty at `pagerDutyUrl` when given. */
export function httpChannels(opts: { sender?: HttpSender; pagerDutyUrl?: string } = {}): HttpChannelBuilder {
  const sender = opts.sender ?? httpSender();
  return async (r, who, resolveSecret) => {
    if (r.type === "pagerduty") {
      const target = { routingKey: await resolveSecret(r.routingKeyRef), ...(r.source ? { source: r.source } : {}), ...(opts.pagerDutyUrl ? { baseUrl: opts.pagerDutyUrl } : {}) };
      return pagerDutyChannel(who, target, sender);
    }
    if (r.type === "webhook") {
      const [url, signingSecret] = await Promise.all([resolveSecret(r.urlRef), resolveSecret(r.signingSecretRef)]);
      return webhookChannel(who, { url: checkedUrl(url, r.urlRef), signingSecret }, sender);
    }
    return teamsChannel(who, { url: checkedUrl(await resolveSecret(r.urlRef), r.urlRef) }, sender);
  };
}
