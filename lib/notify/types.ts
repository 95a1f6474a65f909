/**
 * The contracts of the notify stage: what renderers produce, what senders take, and the receiver as a
 * `Channel` of the delivery core. Renderers are pure; senders are ports with adapters (Slack incoming
 * webhook, Slack Web API, SES v2, SMTP, .eml files).
 */
import type { LookoutEventDetail, Severity } from "../model/event.js";
import type { DeliveryState } from "../model/notify-store.js";

/**
 * How one route shows an event to its receivers (lib/notify/presentation.ts builds it from the
 * configuration): the severity after the route's override, the mentions Lookout writes for it, and the
 * links filled from the configured templates. Never from platform text.
 */
export interface Presentation {
  severity: Severity;
  /** Slack mention tokens (`<!here>`, `<!subteam^S0123ABC>`, `<@U0123ABC>`); empty when none is due. */
  mentions: string[];
  /** Absolute http(s) links, in the order configured: console, logs, runbook… */
  links: Array<{ label: string; url: string }>;
}

/** What a route's presentation is when the configuration says nothing: the event's severity, no mention, no link. */
export const plainPresentation = (detail: LookoutEventDetail): Presentation => ({ severity: detail.severity, mentions: [], links: [] });

/** What a receiver said when it took a message: the ids follow-ups thread under. */
export interface Sent {
  ts?: string;
  channel?: string;
  messageId?: string;
  /** The earlier message this send replaced in place (Slack chat.update), recorded on the delivery. */
  updated?: { ts: string; channel: string };
}

/** One receiver, able to send an alert and a digest. */
export interface Channel {
  /** Stable id of the receiver (never its secret). */
  id: string;
  /** For people and logs: `slack #oncall`, `email oncall@example.com`. */
  label: string;
  /**
   * It shows what it is sent and tells nobody (a preview on screen): its deliveries are recorded so,
   * and the audit says shown, nobody told. Absent: a receiver people read.
   */
  onlooker?: boolean;
  /**
   * Sends an alert, as its route presents it (absent: `plainPresentation`). A follow-up gets its
   * incident; a closing event may also update the incident's first message, an amendment the message
   * of the alert it amends (Web API form).
   */
  send(detail: LookoutEventDetail, incident?: IncidentRef, presentation?: Presentation): Promise<Sent>;
  /**
   * The receiver keeps an incident in a thread and can update its messages (Slack's Web API form).
   * Absent or false (incoming webhook, email): a repeat is not posted again, it is recorded as suppressed.
   */
  threads?: boolean;
  /**
   * What the receiver shows depends on the order its messages arrive (PagerDuty: a resolve before its
   * trigger changes nothing, and the trigger then stays open). A close whose incident has alerts held
   * for this receiver's digest is held behind them, so the digest carries the trigger, then the resolve.
   */
  ordered?: boolean;
  /**
   * `window.id` is the digest's delivery id, carried like an alert id; `heldAt` says when each alert
   * (by id) was held and `at` when the digest goes out, so the digest can say how long each waited.
   */
  sendDigest(held: LookoutEventDetail[], window: DigestWindow, presentationOf?: (detail: LookoutEventDetail) => Presentation): Promise<Sent>;
  /**
   * Sends an escalation of the incident `notice.first` opened (docs/actions.md, "Escalation"): a reply in
   * the incident's thread, shown in the channel, where the receiver keeps one (the incident's `ts`), else a
   * message of its own showing the incident; `presentation.mentions` are the escalation's.
   */
  sendEscalation?(notice: EscalationNotice, incident: IncidentRef | undefined, presentation: Presentation): Promise<Sent>;
  /**
   * Where the receiver can be read back (Slack's Web API): the message an earlier attempt posted for
   * this alert (or digest) id since `since`, if it got through. Absent: a resend cannot be detected.
   */
  findSent?(alertId: string, since: Date, incident?: IncidentRef): Promise<Sent | undefined>;
}

/** An escalation as a receiver is told it. */
export interface EscalationNotice {
  /** Its own id, carried as an alert id is (Slack metadata, the email's Message-ID), so a retry reads it back. */
  id: string;
  /** The incident's alert the route delivered first. */
  first: LookoutEventDetail;
  /** `escalate.after` as written. */
  after: string;
}

export interface DigestWindow {
  from: string;
  to: string;
  id: string;
  heldAt?: Record<string, string>;
  at?: string;
}

/** A Slack message: Block Kit blocks plus the fallback `text` (notifications, screen readers). */
export interface SlackMessage {
  text: string;
  blocks: unknown[];
  /** Set by the deliverer for thread replies (Web API form only). */
  thread_ts?: string;
  /** A thread reply also shown in the channel (an incident's resolution, Web API form only). */
  reply_broadcast?: boolean;
  /** The colour bar by severity: Block Kit blocks inside one legacy attachment with a `color`. */
  attachments?: Array<{ color: string; blocks: unknown[]; fallback?: string }>;
  /** Never unfurl platform links into big previews in an incident channel. */
  unfurl_links?: boolean;
  unfurl_media?: boolean;
  /**
   * Slack message metadata (Web API form only): the alert's id rides on the message, so a sender that
   * took over from one that died can ask Slack whether the message went out (`SlackSender.findPosted`).
   */
  metadata?: { event_type: string; event_payload: Record<string, string> };
}

/** The metadata event type that marks Lookout's messages. */
export const SLACK_ALERT_EVENT = "lookout_alert";

/** Where a Slack message goes; secrets already resolved. */
export type SlackTarget =
  | { kind: "webhook"; url: string }
  | {
      kind: "api";
      token: string;
      channel: string;
      /** An incident's closing reply is also shown in the channel (reply_broadcast); default true. */
      broadcastResolution?: boolean;
      /** Slack actions are configured: the message that stands for an incident carries its buttons. */
      actions?: boolean;
    };

export interface SlackPosted {
  /** The message ts: only the Web API returns one (incoming webhooks answer "ok"). */
  ts?: string;
  channel?: string;
}

/** What to look for: the message that carries this alert id, posted since `sinceMs`, maybe in a thread. */
/** Our clock and a receiver's differ: an earlier attempt is looked for from this long before it began. */
export const READ_BACK_SKEW_MS = 60_000;

export interface PostedQuery {
  alertId: string;
  sinceMs: number;
  threadTs?: string;
}

/** Posts one message; retries 429 (after Retry-After) and 5xx itself; throws SlackDeliveryError when it gives up. */
export interface SlackSender {
  /** It posts to no Slack: it shows the messages to whoever watches (one machine's terminal preview); its channels are onlookers. */
  onlooker?: boolean;
  post(target: SlackTarget, message: SlackMessage): Promise<SlackPosted>;
  /**
   * Web API form: the message an earlier attempt already posted for an alert, read back from the
   * channel's history (or the thread); undefined when there is none. Throws when Slack cannot tell.
   */
  findPosted(target: SlackTarget & { kind: "api" }, query: PostedQuery): Promise<SlackPosted | undefined>;
  /**
   * Web API form: replaces a message Lookout posted (`chat.update`), e.g. an incident's first message
   * turned green when it closes. Retries like `post`; throws SlackDeliveryError when it gives up.
   */
  update(target: SlackTarget & { kind: "api" }, at: { channel: string; ts: string }, message: SlackMessage): Promise<SlackPosted>;
}

/** How a follow-up refers to the first alert of its incident, and to what this receiver shows of it. */
export interface IncidentRef {
  /** The first alert (the `failed` one); the receiver's root alert when the opening was never raised (backfill). */
  first: LookoutEventDetail;
  /**
   * The receiver shows a root message for the incident (`ts`, `messageId` say which): follow-ups are
   * replies to it. False: the receiver never showed the incident, so this event is sent as its opening
   * (the delivery core then sends it without the incident). Absent: as `ts`/`messageId` say.
   */
  shown?: boolean;
  /** The alert whose message is this receiver's root, when it is not the opening (the opening was not shown there). */
  root?: LookoutEventDetail;
  /** The root message's Slack ts for this receiver (Web API form): the follow-up goes in its thread. */
  ts?: string;
  /** The channel id Slack answered with for it: chat.update takes an id, not a `#name`. */
  channel?: string;
  /** It went out in a storm digest: `ts` is the digest's, which follow-ups may thread under but nothing updates. */
  inDigest?: boolean;
  /** The opening was kept quiet (backfill): never published, so on its way to no receiver. */
  quiet?: boolean;
  /** What became of the opening's delivery to this receiver; absent when it has none (yet). */
  told?: DeliveryState;
  /** The root's email Message-ID as the transport reported it (SES replaces ours): follow-ups reply to it. */
  messageId?: string;
  /** An amendment's (`amends`) alert and what this receiver was told of it. */
  amended?: AmendedRef;
  /** On a close: what changed before the opening failed (its amendment), kept in the resolved message. */
  changes?: LookoutEventDetail;
  /** On an amendment or a close: who acknowledged the incident (docs/actions.md), kept in the message it updates. */
  acknowledged?: { userId: string; at: string };
}

/** The alert an amendment updates, and its own message for this receiver when it was posted alone. */
export interface AmendedRef {
  alert: LookoutEventDetail;
  /** Its Slack ts and channel id (Web API form, not sent in a digest): the message chat.update replaces. */
  ts?: string;
  channel?: string;
}

export interface EmailMessage {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** E.g. References/In-Reply-To so that follow-ups thread in mail clients. */
  headers?: Record<string, string>;
}

export interface EmailSent {
  messageId: string;
}

/** Sends one message; throws EmailDeliveryError (with `retryable`) when it cannot. */
export interface EmailTransport {
  send(message: EmailMessage): Promise<EmailSent>;
}

export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
    /** When the receiver asked us to wait (Slack 429 Retry-After). */
    readonly retryAfterMs?: number,
    /** The receiver's own error name (Slack answers `invalid_auth` with HTTP 200). */
    readonly code?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}
export class SlackDeliveryError extends DeliveryError {}
export class EmailDeliveryError extends DeliveryError {}

/** Who a channel is: its receiver's id and the label messages and reports name it by. */
export interface ChannelIdentity {
  id: string;
  label: string;
}

/** A digest line's links are its route's (console, logs, runbook), when the route presents any. */
export const digestLinksOf = (presentationOf?: (d: LookoutEventDetail) => Presentation) =>
  presentationOf ? { links: (d: LookoutEventDetail) => presentationOf(d).links } : {};
