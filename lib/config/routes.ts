/**
 * The `routes:` and `notify:` sections of the configuration: their schema (zod/mini, plugged into
 * lib/config/schema.ts), what they become (route-types.ts), and the checks that need more than one field:
 * unique names, a sender address when email is used, and routes EventBridge can deploy as written.
 * Objects are strict here: a misspelt match key would otherwise widen a route to every event.
 */
import * as z from "zod/mini";
import { patternProblems } from "./route-patterns.js";
import {
  type Escalate,
  type LinkTemplate,
  type Mention,
  type SeverityOverride,
  DEFAULT_DIGEST_WITHIN,
  DEFAULT_SLACK_RATE,
  RESERVED_ROUTE_NAMES,
  type EmailReceiver,
  type HttpReceiver,
  type NotifySettings,
  type ReceiverSet,
  REF_FIELDS,
  type Receiver,
  type Route,
  type RouteMatch,
  type SlackReceiver,
  DEFAULT_ROUTE,
  escalationReceivers,
  routeReceivers,
} from "./route-types.js";
import { isUuidShaped } from "./route-values.js";
import { parseDuration, unitlessDuration } from "./duration.js";
import { linkTemplateProblem } from "./link-templates.js";
import { KINDS, SEVERITIES, type Severity } from "../model/event.js";

export const TRANSITIONS = [
  "failed", "still_failing", "recovered", "cancelled", "changes_listed", "delivery_failed", "target_recovered",
  "cluster_error", "cluster_recovered", "token_rejected", "source_failing", "polling_stalled", "receiver_failing", "quarantined", "dead_letters", "queue_backlog",
] as const;

/** Route names become EventBridge rule names (`lookout-<name>`, at most 64 characters). */
const ROUTE_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const ROUTE_NAME_MAX = 48;

/** `prod-failures` → `RouteProdFailures`. */
export const ruleLogicalId = (routeName: string): string =>
  `Route${routeName.split(/[^A-Za-z0-9]+/).map((s) => s.charAt(0).toUpperCase() + s.slice(1)).join("")}`;

/** A value or a list of values ("any of"); errors name the item as written (`severity[1]` in a list, `severity` alone). */
const anyOf = <T extends z.core.SomeType>(item: T) =>
  z.pipe(z.transform((v: unknown) => (Array.isArray(v) ? v : [v])), z.array(item).check(z.minLength(1)));

const refValue = (wildcards: boolean) =>
  z.string().check(
    z.minLength(1),
    z.refine((s) => wildcards || !s.includes("*"), { message: "wildcards (*) are for service names only" }),
    // EventBridge's wildcard refuses `**`; it would mean the same as `*` anyway.
    z.refine((s) => !s.includes("**"), { message: "must not hold consecutive wildcards (**)" }),
  );

const severity = z.enum(SEVERITIES);

/** A route's own severity: one, or one per environment type (keys case-insensitive, newer types allowed). */
const SeverityOverrideFile = z.union(
  [
    // A string first: a map that fails says which of its entries did (lib/config/load.ts branchIssue).
    z.pipe(z.string(), severity),
    z.record(z.string(), severity).check(
      z.superRefine((map, ctx) => {
        const seen = new Map<string, string>();
        for (const key of Object.keys(map)) {
          if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(key)) {
            ctx.addIssue({ code: "custom", message: "is not an environment type like PRODUCTION, PREVIEW, STAGING or DEVELOPMENT", path: [key], input: key });
          }
          const same = seen.get(key.toUpperCase());
          if (same !== undefined) ctx.addIssue({ code: "custom", message: `names the same environment type as ${same}`, path: [key], input: key });
          seen.set(key.toUpperCase(), key);
        }
        if (!seen.size) ctx.addIssue({ code: "custom", message: "needs at least one environment type", input: map });
      }),
    ),
  ],
  { error: "must be a severity (critical, error, warning, info) or a map from environment type to severity" },
);

/** `@here`, `@channel`, a user group id (S…), a user id (U… or W…): Slack's own ids, never a name to look up. */
const MENTION = /^(@here|@channel|S[A-Z0-9]{6,}|[UW][A-Z0-9]{6,})$/;
const MAX_MENTIONS = 10;
/** An escalation waits at least a tick of dispatch, and no longer than a week. */
const ESCALATE_MIN_MS = 60_000;
const ESCALATE_MAX_MS = 7 * 86_400_000;
const MentionFile = anyOf(
  z.string().check(
    z.superRefine((s, ctx) => {
      if (MENTION.test(s)) return;
      // Slack's own token (<!subteam^S…>, <@U…>) is what Lookout writes: the file names the id alone.
      const id = /^<(?:!subteam\^|@)([A-Z0-9]+)(?:\|[^>]*)?>$/.exec(s)?.[1];
      const message = "must be @here, @channel, a user group id (S0123ABCD) or a user id (U0123ABCD, W0123ABCD)";
      ctx.addIssue({ code: "custom", message: id ? `${message}: write ${id}, not Slack's token` : message, input: s });
    }),
  ),
).check(z.maxLength(MAX_MENTIONS));

/** Who a route (or the default route) mentions in Slack, and for which severities (default critical). */
const mentionFields = { mention: z.optional(MentionFile), mention_on: z.optional(anyOf(severity)) };
const mentionNeedsWho = z.refine<{ mention?: string[]; mention_on?: Severity[] }>((r) => !(r.mention_on && !r.mention), {
  message: "needs mention: who to mention",
  path: ["mention_on"],
});

const LINK_LABEL_MAX = 40;
const LINK_TEMPLATE_MAX = 1000;
const MAX_LINKS = 10;

/** Label → URL template (lib/config/link-templates.ts); labels are shown as written. */
export const LinkTemplatesFile = z.record(z.string(), z.string()).check(
  z.superRefine((map, ctx) => {
    const labels = Object.keys(map);
    if (labels.length > MAX_LINKS) ctx.addIssue({ code: "custom", message: `too many links (max ${MAX_LINKS})`, input: map });
    for (const label of labels) {
      const template = map[label]!;
      const problem =
        !label.trim() || label.length > LINK_LABEL_MAX || /[\u0000-\u001f]/.test(label)
          ? `is not a label of 1 to ${LINK_LABEL_MAX} characters on one line`
          : template.length > LINK_TEMPLATE_MAX
            ? `too long (max ${LINK_TEMPLATE_MAX})`
            : linkTemplateProblem(template);
      if (problem) ctx.addIssue({ code: "custom", message: problem, path: [label], input: template });
    }
  }),
);

/** Built around the config's own secret-reference schema (passed in: schema.ts imports this module). */
export function routeSchemas(secretRef: z.ZodMiniType<string, string>) {
  const Match = z.strictObject({
    kind: z.optional(anyOf(z.enum(KINDS))),
    transition: z.optional(anyOf(z.enum(TRANSITIONS))),
    severity: z.optional(anyOf(z.enum(SEVERITIES))),
    organization: z.optional(anyOf(refValue(false))),
    project: z.optional(anyOf(refValue(false))),
    environment: z.optional(anyOf(refValue(false))),
    service: z.optional(anyOf(refValue(true))),
  });

  const SlackReceiverFile = z
    .strictObject({
      webhook_url: z.optional(secretRef),
      channel: z.optional(
        z.string().check(
          z.refine((s) => /^#[^\s#]+$/.test(s) || /^[CGD][A-Z0-9]{6,}$/.test(s), {
            message: 'must be a channel name like "#oncall" or a channel id like C0123ABCD',
          }),
        ),
      ),
      token: z.optional(secretRef),
      broadcast_resolution: z.optional(z.boolean()),
    })
    .check(
      z.refine((r) => !(r.webhook_url && (r.channel || r.token)), {
        message: "give either webhook_url (an incoming webhook) or channel and token (the Web API), not both",
      }),
      z.refine((r) => Boolean(r.webhook_url || r.channel || r.token), {
        message: "needs webhook_url (an incoming webhook), or channel and token (the Web API)",
      }),
      z.refine((r) => !(r.channel && !r.token && !r.webhook_url), { message: "is required with channel", path: ["token"] }),
      z.refine((r) => !(r.token && !r.channel && !r.webhook_url), { message: "is required with token", path: ["channel"] }),
      z.refine((r) => !(r.webhook_url && r.broadcast_resolution !== undefined), {
        message: "is for the Web API form (channel and token): an incoming webhook cannot reply in a thread",
        path: ["broadcast_resolution"],
      }),
    );

  const EmailReceiverFile = z.strictObject({ to: anyOf(z.email()) });

  /** Whom an escalation pages, in the shape a route's receivers take. */
  const EscalateFile = z.strictObject({
    after: z.string().check(
      z.refine((s) => { const ms = parseDuration(s); return ms !== undefined && ms >= ESCALATE_MIN_MS && ms <= ESCALATE_MAX_MS; }, {
        message: "is not a duration from 1m to 7d (like 15m): dispatch's tick comes once a minute",
      }),
    ),
    mention: z.optional(MentionFile),
    to: z.optional(z.strictObject({ slack: z.optional(SlackReceiverFile), email: z.optional(EmailReceiverFile) }).check(
      z.refine((t) => Boolean(t.slack || t.email), { message: "needs slack or email: who is paged" }),
    )),
  }).check(z.refine((e) => Boolean(e.mention || e.to), { message: "needs mention or to: whom the escalation calls" }));
  // The HTTP receivers (docs/receivers.md): every URL and key a secret reference, as Slack's webhook URL is.
  const PagerDutyReceiverFile = z.strictObject({
    routing_key: secretRef,
    source: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  });
  const WebhookReceiverFile = z.strictObject({ url: secretRef, signing_secret: secretRef });
  const TeamsReceiverFile = z.strictObject({ url: secretRef });
  const httpFields = {
    pagerduty: z.optional(anyOf(PagerDutyReceiverFile)),
    webhook: z.optional(anyOf(WebhookReceiverFile)),
    teams: z.optional(anyOf(TeamsReceiverFile)),
  };

  const RouteFile = z.strictObject({
    name: z.string().check(
      z.refine((s) => ROUTE_NAME.test(s) && s.length <= ROUTE_NAME_MAX, {
        message: `must be lower-case letters and digits joined by single hyphens, at most ${ROUTE_NAME_MAX} characters (it names an EventBridge rule)`,
      }),
      z.refine((s) => !RESERVED_ROUTE_NAMES.includes(s), {
        message: `must not be ${RESERVED_ROUTE_NAMES.join(", ")}: Lookout names its own deliveries so (the default route is notify.default)`,
      }),
    ),
    match: z._default(Match, {}),
    slack: z.optional(anyOf(SlackReceiverFile)),
    email: z.optional(EmailReceiverFile),
    ...httpFields,
    continue: z._default(z.boolean(), true),
    /** Overrides the event's severity for this route's receivers. */
    severity: z.optional(SeverityOverrideFile),
    ...mentionFields,
    links: z.optional(LinkTemplatesFile),
    /** Critical incidents nobody acknowledged or closed in time are escalated (docs/actions.md, "Escalation"). */
    escalate: z.optional(EscalateFile),
  }).check(mentionNeedsWho);

  const NotifyFile = z.strictObject({
    email: z.optional(z.strictObject({ from: z.email(), smtp_url: z.optional(secretRef) })),
    slack_rate: z._default(
      z.strictObject({
        // Bounded: a rate near zero would hold messages for ever, a huge one is no limit at all.
        per_second: z._default(z.number().check(z.minimum(0.01), z.maximum(100)), DEFAULT_SLACK_RATE.perSecond),
        burst: z._default(z.int().check(z.minimum(1), z.maximum(1000)), DEFAULT_SLACK_RATE.burst),
        per_hour: z._default(z.int().check(z.minimum(1), z.maximum(100_000)), DEFAULT_SLACK_RATE.perHour),
      }),
      { per_second: DEFAULT_SLACK_RATE.perSecond, burst: DEFAULT_SLACK_RATE.burst, per_hour: DEFAULT_SLACK_RATE.perHour },
    ),
    fallback: z.optional(z.strictObject({ slack: z.optional(SlackReceiverFile), email: z.optional(EmailReceiverFile), ...httpFields })),
    /** The default route: gets every event no route matches (docs: README, "Routes"). */
    default: z.optional(
      z.strictObject({ slack: z.optional(SlackReceiverFile), email: z.optional(EmailReceiverFile), ...httpFields, ...mentionFields }).check(
        z.refine((d) => Boolean(d.slack || d.email || d.pagerduty || d.webhook || d.teams), {
          message: "needs slack, email, pagerduty, webhook or teams: who gets the events no route matches",
        }),
        mentionNeedsWho,
      ),
    ),
    /** A storm's held alerts go out as a digest within this, even when nothing else arrives. */
    digest_within: z._default(
      z.string({ error: unitlessDuration }).check(
        z.refine((s) => (parseDuration(s) ?? 0) >= 10_000, { message: "is not a duration of at least 10s (like 2m)" }),
      ),
      DEFAULT_DIGEST_WITHIN,
    ),
    /** Links shown with every route's events (a route's or a service's override them by label). */
    links: z.optional(LinkTemplatesFile),
    /** Buttons on incident messages (Web API form): acknowledge and mute from Slack (docs/actions.md). */
    slack_actions: z.optional(z.strictObject({ signing_secret: secretRef })),
  });

  return {
    Routes: z._default(z.array(RouteFile), []),
    Notify: z._default(NotifyFile, {
      slack_rate: { per_second: DEFAULT_SLACK_RATE.perSecond, burst: DEFAULT_SLACK_RATE.burst, per_hour: DEFAULT_SLACK_RATE.perHour },
      digest_within: DEFAULT_DIGEST_WITHIN,
    }),
  };
}

type Schemas = ReturnType<typeof routeSchemas>;
export type RoutesFile = z.infer<Schemas["Routes"]>;
export type NotifyFile = z.infer<Schemas["Notify"]>;
type SlackReceiverFile = NonNullable<NonNullable<NotifyFile["fallback"]>["slack"]>;
type EmailReceiverFile = NonNullable<NonNullable<NotifyFile["fallback"]>["email"]>;

const toSlack = (r: SlackReceiverFile): SlackReceiver =>
  r.webhook_url
    ? { type: "slack", form: "webhook", webhookUrlRef: r.webhook_url }
    : { type: "slack", form: "api", channel: r.channel!, tokenRef: r.token!, broadcastResolution: r.broadcast_resolution ?? true };
const toEmail = (r: EmailReceiverFile): EmailReceiver => ({ type: "email", to: [...new Set(r.to)] });

/** A route's (or notify.default's, notify.fallback's) PagerDuty, webhook and Teams receivers as one list, in that order. */
function toHttp(r: Pick<RoutesFile[number], "pagerduty" | "webhook" | "teams">): HttpReceiver[] {
  return [
    ...(r.pagerduty ?? []).map((p): HttpReceiver => ({ type: "pagerduty", routingKeyRef: p.routing_key, ...(p.source ? { source: p.source } : {}) })),
    ...(r.webhook ?? []).map((w): HttpReceiver => ({ type: "webhook", urlRef: w.url, signingSecretRef: w.signing_secret })),
    ...(r.teams ?? []).map((t): HttpReceiver => ({ type: "teams", urlRef: t.url })),
  ];
}

function toMatch(m: RoutesFile[number]["match"]): RouteMatch {
  const out: RouteMatch = {};
  if (m.kind) out.kind = [...new Set(m.kind)];
  if (m.transition) out.transition = [...new Set(m.transition)];
  if (m.severity) out.severity = [...new Set(m.severity)];
  for (const f of REF_FIELDS) {
    const values = m[f];
    if (values) out[f] = [...new Set(values.map((v) => (isUuidShaped(v) ? v.toLowerCase() : v)))];
  }
  return out;
}

/** Label → template, in the order written. */
export const toLinks = (file: Record<string, string>): LinkTemplate[] => Object.entries(file).map(([label, template]) => ({ label, template }));

const toSeverity = (file: NonNullable<RoutesFile[number]["severity"]>): SeverityOverride =>
  typeof file === "string"
    ? file
    : { byEnvironmentType: Object.fromEntries(Object.entries(file).map(([type, s]) => [type.toUpperCase(), s])) };

/** Mentions are for critical events unless `mention_on` says otherwise. */
const toMention = (r: { mention?: string[]; mention_on?: Severity[] }): { mention?: Mention } =>
  r.mention ? { mention: { who: [...new Set(r.mention)], on: [...new Set<Severity>(r.mention_on ?? ["critical"])] } } : {};

export function toRoutes(file: RoutesFile): Route[] {
  return file.map((r) => ({
    name: r.name,
    match: toMatch(r.match),
    slack: (r.slack ?? []).map(toSlack),
    ...(r.email ? { email: toEmail(r.email) } : {}),
    ...(toHttp(r).length ? { http: toHttp(r) } : {}),
    continue: r.continue,
    ...(r.severity ? { severity: toSeverity(r.severity) } : {}),
    ...toMention(r),
    ...(r.links ? { links: toLinks(r.links) } : {}),
    ...(r.escalate ? { escalate: toEscalate(r.escalate) } : {}),
  }));
}

const toEscalate = (e: NonNullable<RoutesFile[number]["escalate"]>): Escalate => ({
  afterMs: parseDuration(e.after)!,
  after: e.after,
  ...(e.mention ? { mention: [...new Set(e.mention)] } : {}),
  ...(e.to ? { to: toPair(e.to) } : {}),
});

const toPair = (p: NonNullable<NotifyFile["fallback"]>): ReceiverSet => ({
  ...(p.slack ? { slack: toSlack(p.slack) } : {}),
  ...(p.email ? { email: toEmail(p.email) } : {}),
  ...(toHttp(p).length ? { http: toHttp(p) } : {}),
});

export function toNotify(file: NotifyFile): NotifySettings {
  const out: NotifySettings = {
    slackRate: { perSecond: file.slack_rate.per_second, burst: file.slack_rate.burst, perHour: file.slack_rate.per_hour },
    digestWithinMs: parseDuration(file.digest_within)!,
  };
  if (file.default) out.default = { ...toPair(file.default), ...toMention(file.default) };
  if (file.links) out.links = toLinks(file.links);
  if (file.email) out.email = { from: file.email.from, ...(file.email.smtp_url ? { smtpUrlRef: file.email.smtp_url } : {}) };
  if (file.fallback) out.fallback = toPair(file.fallback);
  if (file.slack_actions) out.slackActions = { signingSecretRef: file.slack_actions.signing_secret };
  return out;
}

export interface RoutingProblem {
  /** Config path, e.g. `routes[2].match.service`. */
  field: string;
  problem: string;
}

/** Everything wrong across routes and notify settings, in file order (routes, then notify), or none. */
export function routingProblems(routes: readonly Route[], notify: NotifySettings): RoutingProblem[] {
  const out: RoutingProblem[] = [];
  const byName = new Map<string, number>();
  // Each rule's id and its `…Solo` half's, for events of no incident (infra/stack.ts), by who has it:
  // `team2-solo` would take team2's second id, `default-solo` the default route's.
  const byRuleId = new Map<string, string>();
  const idsOf = (name: string) => [ruleLogicalId(name), `${ruleLogicalId(name)}Solo`];
  if (notify.default?.slack || notify.default?.email) for (const id of idsOf(DEFAULT_ROUTE)) byRuleId.set(id, "the default route's rule (notify.default)");
  const patterns = patternProblems(routes);
  for (const [i, r] of routes.entries()) {
    const same = byName.get(r.name);
    // Only a route with receivers (or an escalation's) gets a rule (lib/routes/rules.ts): a silencer has no id to share.
    const ruleIds = routeReceivers(r).length || escalationReceivers(r).length ? idsOf(r.name) : [];
    const clashId = ruleIds.find((id) => byRuleId.has(id));
    const clash = clashId === undefined ? undefined : byRuleId.get(clashId);
    if (same !== undefined) out.push({ field: `routes[${i}].name`, problem: `"${r.name}" is already the name of routes[${same}]` });
    else if (clash !== undefined) out.push({ field: `routes[${i}].name`, problem: `would share the rule id ${clashId} with ${clash}; rename one` });
    if (same === undefined) byName.set(r.name, i);
    if (clash === undefined) for (const id of ruleIds) byRuleId.set(id, `routes[${i}]`);
    if (!routeReceivers(r).length && r.continue) {
      out.push({ field: `routes[${i}]`, problem: "has no receivers: add slack, email, pagerduty, webhook or teams, or continue: false to silence what it matches" });
    }
    for (const p of patterns.filter((p) => p.index === i)) out.push({ field: `routes[${i}]${p.field ? `.${p.field}` : ""}`, problem: p.message });
  }
  if (!notify.email) {
    const i = routes.findIndex((r) => r.email);
    const e = routes.findIndex((r) => r.escalate?.to?.email);
    if (i >= 0) out.push({ field: "notify.email.from", problem: `is required: routes[${i}] sends email` });
    else if (e >= 0) out.push({ field: "notify.email.from", problem: `is required: routes[${e}].escalate.to sends email` });
    else if (notify.fallback?.email) out.push({ field: "notify.email.from", problem: "is required: the fallback sends email" });
    else if (notify.default?.email) out.push({ field: "notify.email.from", problem: "is required: the default route sends email" });
  }
  return out;
}

/** A secret reference in the routes or notify settings, and where it is written (`routes[0].slack.token`). */
export interface SecretReference {
  field: string;
  ref: string;
}

/** Every secret reference a notifier resolves: receivers' webhook URLs and tokens, and the SMTP URL. */
export function receiverSecretRefs(routes: readonly Route[], notify: NotifySettings): SecretReference[] {
  const out: SecretReference[] = [];
  const slack = (at: string, s: SlackReceiver) =>
    out.push(s.form === "webhook" ? { field: `${at}.webhook_url`, ref: s.webhookUrlRef } : { field: `${at}.token`, ref: s.tokenRef });
  routes.forEach((route, i) => route.slack.forEach((s, j) => slack(route.slack.length > 1 ? `routes[${i}].slack[${j}]` : `routes[${i}].slack`, s)));
  routes.forEach((route, i) => route.escalate?.to?.slack && slack(`routes[${i}].escalate.to.slack`, route.escalate.to.slack));
  const http = (at: string, receivers: readonly HttpReceiver[] = []) => {
    for (const type of ["pagerduty", "webhook", "teams"] as const) {
      const ofType = receivers.filter((r) => r.type === type);
      ofType.forEach((r, j) => {
        for (const ref of httpSecretRefs(r)) out.push({ field: `${at}.${type}${ofType.length > 1 ? `[${j}]` : ""}.${ref.key}`, ref: ref.ref });
      });
    }
  };
  routes.forEach((route, i) => http(`routes[${i}]`, route.http));
  if (notify.default?.slack) slack("notify.default.slack", notify.default.slack);
  http("notify.default", notify.default?.http);
  if (notify.fallback?.slack) slack("notify.fallback.slack", notify.fallback.slack);
  http("notify.fallback", notify.fallback?.http);
  if (notify.email?.smtpUrlRef) out.push({ field: "notify.email.smtp_url", ref: notify.email.smtpUrlRef });
  return out;
}

/** An HTTP receiver's secret references, by the key they are written under. */
export function httpSecretRefs(r: HttpReceiver): Array<{ key: string; ref: string }> {
  if (r.type === "pagerduty") return [{ key: "routing_key", ref: r.routingKeyRef }];
  if (r.type === "webhook") return [{ key: "url", ref: r.urlRef }, { key: "signing_secret", ref: r.signingSecretRef }];
  return [{ key: "url", ref: r.urlRef }];
}

/** `env:` references whose variable is unset or empty in this environment: a receiver that cannot send. */
export function unsetEnvSecrets(refs: readonly SecretReference[], env: Readonly<Record<string, string | undefined>>): SecretReference[] {
  return refs.filter((r) => r.ref.startsWith("env:") && !env[r.ref.slice("env:".length)]);
}

