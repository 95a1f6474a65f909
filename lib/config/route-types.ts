/**
 * Routes as data: who is told about which event. The configuration file's `routes:` and `notify:`
 * sections become these (lib/config/routes.ts); the local router matches them (lib/routes/match.ts)
 * and the deployed stack turns them into EventBridge rules (lib/config/route-patterns.ts). Secrets stay
 * references (`env:NAME`, `ssm:/path`, `secretsmanager:name`) until a sender resolves them.
 */
import type { EventKind, Severity, Transition } from "../model/event.js";
import { kindOf, type ReceiverKind } from "../model/notify-store.js";

/** The fields a route may match on, in the order they are checked and explained. */
export const MATCH_FIELDS = ["kind", "transition", "severity", "organization", "project", "environment", "service"] as const;
export type MatchField = (typeof MATCH_FIELDS)[number];

/** Fields that name a platform object: a uuid-shaped value matches its `.id`, anything else its `.name`. */
export const REF_FIELDS = ["organization", "project", "environment", "service"] as const;
export type RefField = (typeof REF_FIELDS)[number];

/**
 * What a route matches. Every key is optional (absent: any value, even none); a list means "any of".
 * Ref fields hold the values as written (uuids lower-cased); only `service` names take `*` wildcards.
 */
export interface RouteMatch {
  kind?: EventKind[];
  transition?: Transition[];
  severity?: Severity[];
  organization?: string[];
  project?: string[];
  environment?: string[];
  service?: string[];
}

/** Slack, as an incoming webhook (no threads) or through the Web API with a bot token (real threads). */
export type SlackReceiver =
  | { type: "slack"; form: "webhook"; webhookUrlRef: string }
  | {
      type: "slack";
      form: "api";
      channel: string;
      tokenRef: string;
      /** An incident's closing reply is also shown in the channel (`reply_broadcast`); absent: true. */
      broadcastResolution?: boolean;
    };

export interface EmailReceiver {
  type: "email";
  to: string[];
}

/**
 * PagerDuty's Events API v2 (docs/receivers.md, "PagerDuty"): an incident is one PagerDuty alert, keyed
 * by `dedup_key` = Lookout's incident id; the routing key is a secret reference.
 */
export interface PagerDutyReceiver {
  type: "pagerduty";
  routingKeyRef: string;
  /** PagerDuty's `source` field: where the problem is (default `lookout`). */
  source?: string;
}

/** Lookout's event as signed JSON to a URL of one's own (docs/receivers.md, "Generic webhook"). */
export interface WebhookReceiver {
  type: "webhook";
  urlRef: string;
  signingSecretRef: string;
}

/** Microsoft Teams through a Workflows webhook ("When a Teams webhook request is received"): Adaptive Cards. */
export interface TeamsReceiver {
  type: "teams";
  urlRef: string;
}

/** The receivers Lookout reaches by an HTTP POST of its own (not Slack's or an email transport). */
export type HttpReceiver = PagerDutyReceiver | WebhookReceiver | TeamsReceiver;

export type Receiver = SlackReceiver | EmailReceiver | HttpReceiver;

/**
 * A route's own severity for its receivers: one for every event, or one per environment type (keys
 * upper-cased: PRODUCTION, PREVIEW, STAGING, DEVELOPMENT or a newer type).
 */
export type SeverityOverride = Severity | { byEnvironmentType: Record<string, Severity> };

/** Who Slack mentions, as written (`@here`, `@channel`, a user group id S…, user ids U…/W…), and for which severities. */
export interface Mention {
  who: string[];
  on: Severity[];
}

/** A link shown with an event: its label as written and a URL template (lib/config/link-templates.ts). */
export interface LinkTemplate {
  label: string;
  template: string;
}

/**
 * A route's escalation (docs/actions.md, "Escalation"): a critical incident it delivered that nobody
 * acknowledged or closed within `afterMs` is re-announced where it was shown, mentioning `mention`, and
 * sent to `to`.
 */
export interface Escalate {
  afterMs: number;
  /** As written: `after: 15m`, for messages. */
  after: string;
  mention?: string[];
  to?: { slack?: SlackReceiver; email?: EmailReceiver };
}

export interface Route {
  /** Unique, `[a-z0-9-]`; it names the EventBridge rule and tells notifiers which route matched. */
  name: string;
  match: RouteMatch;
  slack: SlackReceiver[];
  email?: EmailReceiver;
  /** PagerDuty, generic webhooks and Teams, in that order (the file's `pagerduty`, `webhook`, `teams`). */
  http?: HttpReceiver[];
  /** false: an event this route matches is not matched against later routes. */
  continue: boolean;
  severity?: SeverityOverride;
  mention?: Mention;
  /** Override `notify.links` by label. */
  links?: LinkTemplate[];
  escalate?: Escalate;
}

/**
 * Transitions a route gets with one it names: an amendment follows the alert it amends, and an
 * incident's close follows its opening, so a receiver that saw an incident open sees it updated and closed.
 */
export const FOLLOWING_TRANSITIONS: Readonly<Partial<Record<Transition, readonly Transition[]>>> = {
  failed: ["changes_listed", "recovered"],
  still_failing: ["changes_listed"],
  delivery_failed: ["target_recovered"],
  cluster_error: ["cluster_recovered"],
};

/** The transitions a route's `match.transition` matches: those written and those that follow them. */
export const withFollowing = (written: readonly string[]): string[] => [
  ...new Set(written.flatMap((t) => [t, ...(FOLLOWING_TRANSITIONS[t as Transition] ?? [])])),
];

export interface NotifySettings {
  email?: { from: string; smtpUrlRef?: string };
  /** Per receiver (Slack or email): a storm beyond this budget, or past `perHour` an hour, becomes a digest. */
  slackRate: { perSecond: number; burst: number; perHour: number };
  /** Where an event goes when its receiver keeps failing. */
  fallback?: ReceiverSet;
  /** The default route (like Alertmanager's root route): who gets an event that no route matches. */
  default?: ReceiverSet & { mention?: Mention };
  /** Links shown with every route's events; a route's or a service's links override them by label. */
  links?: LinkTemplate[];
  /** The longest an alert held back by a storm waits before its digest goes out, even if nothing else comes. */
  digestWithinMs: number;
  /**
   * Acknowledge and mute from Slack (docs/actions.md): incident messages of the Web API form carry
   * buttons, and the interactivity endpoint verifies Slack's requests with this signing secret.
   */
  slackActions?: { signingSecretRef: string };
}

/** The receivers notify.default and notify.fallback name: one Slack, one email, and HTTP receivers. */
export interface ReceiverSet {
  slack?: SlackReceiver;
  email?: EmailReceiver;
  http?: HttpReceiver[];
}

export const DEFAULT_SLACK_RATE = { perSecond: 1, burst: 10, perHour: 60 } as const;
export const DEFAULT_DIGEST_WITHIN = "2m";

/**
 * Names the notifier gives deliveries that no configured route made: the default route's, the fallback's,
 * a digest's. A route may not take them (its deliveries would be mistaken for theirs). One machine's
 * runner checks its own (local/runtime/preview-route.ts).
 */
export const DEFAULT_ROUTE = "default";
export const FALLBACK_ROUTE = "fallback";
export const DIGEST_ROUTE = "digest";
export const RESERVED_ROUTE_NAMES: readonly string[] = [DEFAULT_ROUTE, FALLBACK_ROUTE, DIGEST_ROUTE];

/** The receivers of the fallback or the default route, Slack first, then email, then the HTTP receivers. */
export const receiversOf = (r: ReceiverSet | undefined): Receiver[] => [
  ...(r?.slack ? [r.slack] : []),
  ...(r?.email ? [r.email] : []),
  ...(r?.http ?? []),
];

/** Whom a route's escalation pages (`escalate.to`), Slack first. */
export const escalationReceivers = (route: Route | undefined): Receiver[] => receiversOf(route?.escalate?.to);

/** The receivers of a route, Slack first, then email, then the HTTP receivers, in the order written. */
export const routeReceivers = (route: Route): Receiver[] => [...route.slack, ...(route.email ? [route.email] : []), ...(route.http ?? [])];

/** The kinds of receiver a route's escalation goes to: the route's (where it was shown) and `to`'s. */
export const escalationKinds = (route: Route): ReceiverKind[] =>
  [...new Set([...routeReceivers(route), ...escalationReceivers(route)].filter(reAnnounces).map(kindOf))].sort();

/**
 * The receivers an escalation is re-announced to: Slack and email. PagerDuty escalates by its own
 * escalation policies (its alert is open from the opening); a webhook and Teams get no re-announcement
 * (docs/actions.md, "Escalation").
 */
export const reAnnounces = (r: Receiver): boolean => r.type === "slack" || r.type === "email";
