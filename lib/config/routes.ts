/**
 * The `routes:` and `notify:` sections of the configuration: their schema (zod/mini, plugged into
 * lib/config/schema.ts), what they become (route-types.ts), and the checks that need more than one field:
 * unique names, a sender address when email is used, and routes EventBridge can deploy as written.
 * Objects are strict here: a misspelt match key would otherwise widen a route to every event.
 */
import * as z from "zod/mini";
import { distinctReceivers } from "./receivers.js";
import { patternProblems } from "./route-patterns.js";
import {
  DEFAULT_DIGEST_WITHIN,
  DEFAULT_SLACK_RATE,
  RESERVED_ROUTE_NAMES,
  type EmailReceiver,
  type NotifySettings,
  REF_FIELDS,
  type Receiver,
  type Route,
  type RouteMatch,
  type SlackReceiver,
  receiversOf,
  routeReceivers,
} from "./route-types.js";
import { isUuidShaped } from "./route-values.js";
import { parseDuration } from "./duration.js";
import { KINDS, SEVERITIES } from "../model/event.js";

export const TRANSITIONS = [
  "failed", "still_failing", "recovered", "cancelled", "delivery_failed", "cluster_error",
  "changes_listed", "target_recovered", "cluster_recovered",
  "token_rejected", "source_failing", "polling_stalled", "receiver_failing", "quarantined",
] as const;

/** Route names become EventBridge rule names (`lookout-<name>`, at most 64 characters). */
const ROUTE_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const ROUTE_NAME_MAX = 48;

/** `prod-failures` → `RouteProdFailures`. */
export const ruleLogicalId = (routeName: string): string =>
  `Route${routeName.split(/[^A-Za-z0-9]+/).map((s) => s.charAt(0).toUpperCase() + s.slice(1)).join("")}`;

/** A value or a list of values ("any of"); errors name the item (`severity[0]`) either way. */
const anyOf = <T extends z.core.SomeType>(item: T) =>
  z.pipe(z.transform((v: unknown) => (Array.isArray(v) ? v : [v])), z.array(item).check(z.minLength(1)));

const refValue = (wildcards: boolean) =>
  z.string().check(
    z.minLength(1),
    z.refine((s) => wildcards || !s.includes("*"), { message: "wildcards (*) are for service names only" }),
    // EventBridge's wildcard refuses `**`; it would mean the same as `*` anyway.
    z.refine((s) => !s.includes("**"), { message: "must not hold consecutive wildcards (**)" }),
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
    );

  const EmailReceiverFile = z.strictObject({ to: anyOf(z.email()) });

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
    continue: z._default(z.boolean(), true),
  });

  const NotifyFile = z.strictObject({
    email: z.optional(z.strictObject({ from: z.email(), smtp_url: z.optional(secretRef) })),
    slack_rate: z._default(
      z.strictObject({
        // Bounded: a rate near zero would hold messages for ever, a huge one is no limit at all.
        per_second: z._default(z.number().check(z.minimum(0.01), z.maximum(100)), DEFAULT_SLACK_RATE.perSecond),
        burst: z._default(z.int().check(z.minimum(1), z.maximum(1000)), DEFAULT_SLACK_RATE.burst),
      }),
      { per_second: DEFAULT_SLACK_RATE.perSecond, burst: DEFAULT_SLACK_RATE.burst },
    ),
    fallback: z.optional(z.strictObject({ slack: z.optional(SlackReceiverFile), email: z.optional(EmailReceiverFile) })),
    /** The default route: gets every event no route matches (docs: README, "Routes"). */
    default: z.optional(
      z.strictObject({ slack: z.optional(SlackReceiverFile), email: z.optional(EmailReceiverFile) }).check(
        z.refine((d) => Boolean(d.slack || d.email), { message: "needs slack or email: who gets the events no route matches" }),
      ),
    ),
    /** A storm's held alerts go out as a digest within this, even when nothing else arrives. */
    digest_within: z._default(
      z.string().check(
        z.refine((s) => (parseDuration(s) ?? 0) >= 10_000, { message: "is not a duration of at least 10s (like 2m)" }),
      ),
      DEFAULT_DIGEST_WITHIN,
    ),
  });

  return {
    Routes: z._default(z.array(RouteFile), []),
    Notify: z._default(NotifyFile, {
      slack_rate: { per_second: DEFAULT_SLACK_RATE.perSecond, burst: DEFAULT_SLACK_RATE.burst },
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
    : { type: "slack", form: "api", channel: r.channel!, tokenRef: r.token! };
const toEmail = (r: EmailReceiverFile): EmailReceiver => ({ type: "email", to: [...new Set(r.to)] });

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

export function toRoutes(file: RoutesFile): Route[] {
  return file.map((r) => ({
    name: r.name,
    match: toMatch(r.match),
    slack: (r.slack ?? []).map(toSlack),
    ...(r.email ? { email: toEmail(r.email) } : {}),
    continue: r.continue,
  }));
}

const toPair = (p: NonNullable<NotifyFile["fallback"]>): { slack?: SlackReceiver; email?: EmailReceiver } => ({
  ...(p.slack ? { slack: toSlack(p.slack) } : {}),
  ...(p.email ? { email: toEmail(p.email) } : {}),
});

export function toNotify(file: NotifyFile): NotifySettings {
  const out: NotifySettings = {
    slackRate: { perSecond: file.slack_rate.per_second, burst: file.slack_rate.burst },
    digestWithinMs: parseDuration(file.digest_within)!,
  };
  if (file.default) out.default = toPair(file.default);
  if (file.email) out.email = { from: file.email.from, ...(file.email.smtp_url ? { smtpUrlRef: file.email.smtp_url } : {}) };
  if (file.fallback) out.fallback = toPair(file.fallback);
  return out;
}

export interface RoutingProblem {
  /** Config path, e.g. `routes[2].match.service`. */
  field: string;
  problem: string;
}

/** The first thing wrong across routes and notify settings, or undefined. */
export function routingProblem(routes: readonly Route[], notify: NotifySettings): RoutingProblem | undefined {
  const byName = new Map<string, number>();
  const byRuleId = new Map<string, number>();
  for (const [i, r] of routes.entries()) {
    const same = byName.get(r.name);
    if (same !== undefined) return { field: `routes[${i}].name`, problem: `"${r.name}" is already the name of routes[${same}]` };
    byName.set(r.name, i);
    const ruleId = ruleLogicalId(r.name);
    const clash = byRuleId.get(ruleId);
    if (clash !== undefined) return { field: `routes[${i}].name`, problem: `would share the rule id ${ruleId} with routes[${clash}]; rename one` };
    byRuleId.set(ruleId, i);
    if (!routeReceivers(r).length && r.continue) {
      return { field: `routes[${i}]`, problem: "has no receivers: add slack or email, or continue: false to silence what it matches" };
    }
  }
  if (!notify.email) {
    const i = routes.findIndex((r) => r.email);
    if (i >= 0) return { field: "notify.email.from", problem: `is required: routes[${i}] sends email` };
    if (notify.fallback?.email) return { field: "notify.email.from", problem: "is required: the fallback sends email" };
    if (notify.default?.email) return { field: "notify.email.from", problem: "is required: the default route sends email" };
  }
  const p = patternProblems(routes)[0];
  if (p) return { field: `routes[${p.index}]${p.field ? `.${p.field}` : ""}`, problem: p.message };
  return undefined;
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
  if (notify.default?.slack) slack("notify.default.slack", notify.default.slack);
  if (notify.fallback?.slack) slack("notify.fallback.slack", notify.fallback.slack);
  if (notify.email?.smtpUrlRef) out.push({ field: "notify.email.smtp_url", ref: notify.email.smtpUrlRef });
  return out;
}

/** `env:` references whose variable is unset or empty in this environment: a receiver that cannot send. */
export function unsetEnvSecrets(refs: readonly SecretReference[], env: Readonly<Record<string, string | undefined>>): SecretReference[] {
  return refs.filter((r) => r.ref.startsWith("env:") && !env[r.ref.slice("env:".length)]);
}

/** Every receiver the configuration names, once each (routes, the default route, then the fallbacks). */
export function allReceivers(routes: readonly Route[], notify: NotifySettings): Receiver[] {
  return distinctReceivers([...routes.flatMap(routeReceivers), ...receiversOf(notify.default), ...receiversOf(notify.fallback)]);
}

