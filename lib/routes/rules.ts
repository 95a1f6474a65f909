/**
 * Routes as CloudFormation: one `AWS::Events::Rule` per route on the Lookout bus, its pattern from
 * lib/config/route-patterns.ts, its targets the notifiers the route needs. Pure JSON in, JSON out; the
 * stack that includes it is built elsewhere.
 */
import { EVENT_SOURCE } from "../model/event.js";
import { type EventPattern, eventPattern } from "../config/route-patterns.js";
import { DEFAULT_ROUTE, escalationReceivers, type NotifySettings, type Route } from "../config/route-types.js";
import { ruleLogicalId } from "../config/routes.js";

/** A rule target as CloudFormation takes it; Arn may be an intrinsic (`{"Fn::GetAtt": [...]}`). */
export interface RuleTarget {
  Id: string;
  Arn: unknown;
  [property: string]: unknown;
}

export interface RuleTargets {
  slack?: RuleTarget;
  email?: RuleTarget;
  /** PagerDuty, generic webhooks and Teams: one notify function for the three. */
  http?: RuleTarget;
}

export interface RuleOptions {
  /** The bus: its name or an intrinsic; default "lookout". */
  eventBusName?: unknown;
  /** Rule names are `<prefix><route name>`; default "lookout-". */
  namePrefix?: string;
  /** notify.default: a rule `<prefix>default` that takes every event (see ruleResources). */
  defaultRoute?: NotifySettings["default"];
}

export interface RuleResource {
  Type: "AWS::Events::Rule";
  Properties: {
    Name: string;
    Description: string;
    EventBusName: unknown;
    EventPattern: EventPattern;
    State: "ENABLED";
    Targets: Array<RuleTarget & { InputTransformer: { InputTemplate: string } }>;
  };
}

/**
 * What a target receives: the route's name and the whole event. `<aws.events.event.json>` is the full
 * event; `<aws.events.event>` would leave out `detail`.
 */
export const inputTemplate = (routeName: string): string => `{"route": ${JSON.stringify(routeName)}, "event": <aws.events.event.json>}`;

/**
 * One `AWS::Events::Rule` per route that has receivers, keyed by logical id, and one for the default
 * route. Pure: JSON in, JSON out. The default route's rule matches every Lookout event and the notify
 * handler delivers it only when no route matches (lib/routes/match.ts decideRoutes): "no route
 * matched" as a pattern would be the negation of every route at once, far over EventBridge's size
 * quota and inexact for wildcards; the check in the handler is the local router itself, so both agree.
 */
export function ruleResources(routes: readonly Route[], targets: RuleTargets, opts: RuleOptions = {}): Record<string, RuleResource> {
  const out: Record<string, RuleResource> = {};
  const rule = (name: string, kinds: Array<keyof RuleTargets>, pattern: () => EventPattern, description: string) => {
    if (!kinds.length) return; // a route that only stops matching needs no rule
    const logicalId = ruleLogicalId(name);
    if (out[logicalId]) throw new Error(`routes ${name} and another route share the rule id ${logicalId}`);
    out[logicalId] = {
      Type: "AWS::Events::Rule",
      Properties: {
        Name: `${opts.namePrefix ?? "lookout-"}${name}`,
        Description: `${description} (${kinds.join(" and ")})`,
        EventBusName: opts.eventBusName ?? "lookout",
        EventPattern: pattern(),
        State: "ENABLED",
        Targets: kinds.map((k) => {
          const target = targets[k];
          if (!target) throw new Error(`route ${name} sends to ${k}, but no ${k} target was given`);
          return { ...target, InputTransformer: { InputTemplate: inputTemplate(name) } };
        }),
      },
    };
  };
  routes.forEach((route, index) => {
    // Escalation's `to` is told of a close after an escalation: its kind's notify function gets the route's events too.
    const paged: string[] = escalationReceivers(route).map((r) => r.type);
    const kinds = (["slack", "email", "http"] as const).filter((k) =>
      (k === "slack" ? route.slack.length > 0 : k === "email" ? route.email !== undefined : (route.http?.length ?? 0) > 0) || paged.includes(k));
    rule(route.name, kinds, () => eventPattern(routes, index), `Lookout route ${route.name}`);
  });
  const d = opts.defaultRoute;
  const kinds = (["slack", "email"] as const).filter((k) => d?.[k] !== undefined);
  rule(DEFAULT_ROUTE, kinds, () => ({ source: [EVENT_SOURCE] }), "Lookout default route: every event; delivered only when no route matches it");
  return out;
}
