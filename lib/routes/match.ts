/**
 * The local router: which routes an event matches, in order, and why. Pure. Its semantics are exactly
 * those of the EventBridge patterns of lib/config/route-patterns.ts (checked against moto_server and by
 * a fuzzed parity test): kind/transition/severity exact; organization/project/environment/service: a uuid-shaped value
 * matches `.id`, anything else `.name` (service names with `*` wildcards); a field the event lacks
 * never matches a route that constrains it.
 */
import type { LookoutEventDetail } from "../model/event.js";
import { distinctReceivers } from "../config/receivers.js";
import {
  DEFAULT_ROUTE, MATCH_FIELDS, type MatchField, type NotifySettings, type Receiver, type Route, receiversOf, routeReceivers, withFollowing,
} from "../config/route-types.js";
import { globMatch, splitRefValues } from "../config/route-values.js";

/** How one field of the event compared with what a route wants. */
export interface FieldCheck {
  field: MatchField;
  /** The route's values for the field, as written. */
  wanted: string[];
  /** The event's value that decided (`environment.name` → "production"); undefined when absent. */
  path: string;
  value: string | undefined;
  matched: boolean;
}

export interface RouteDecision {
  route: Route;
  index: number;
  receivers: Receiver[];
  /** One check per field the route constrains, all matched. */
  why: FieldCheck[];
  /** This route has continue: false: later routes were not considered. */
  stops: boolean;
}

export type RouteOutcome =
  | { outcome: "matched"; decision: RouteDecision }
  /** `failed` is the first field, in MATCH_FIELDS order, that did not match. */
  | { outcome: "not_matched"; route: Route; index: number; failed: FieldCheck }
  /** An earlier route with continue: false matched, so this one was not considered. */
  | { outcome: "not_considered"; route: Route; index: number; stoppedBy: string };

export interface RoutesExplained {
  routes: RouteOutcome[];
  /** Every receiver the event reaches, once each. */
  receivers: Receiver[];
}

type Detail = Partial<Record<string, unknown>>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Checks one field. Non-string values count as absent: no route value can equal them. */
export function checkField(detail: LookoutEventDetail | Detail, field: MatchField, wanted: string[]): FieldCheck {
  const d = detail as Detail;
  if (field === "kind" || field === "transition" || field === "severity") {
    const value = str(d[field]);
    const matches = field === "transition" ? withFollowing(wanted) : wanted;
    return { field, wanted, path: field, value, matched: value !== undefined && matches.includes(value) };
  }
  const ref = obj(d[field]);
  const id = str(ref?.id);
  const name = str(ref?.name);
  const { ids, names, patterns } = splitRefValues(wanted, field === "service");
  if (id !== undefined && ids.includes(id)) return { field, wanted, path: `${field}.id`, value: id, matched: true };
  if (name !== undefined && (names.includes(name) || patterns.some((p) => globMatch(p, name)))) {
    return { field, wanted, path: `${field}.name`, value: name, matched: true };
  }
  // Say what the event had that the route could have matched: its name when the route names, else its id.
  const byName = names.length + patterns.length > 0;
  return byName
    ? { field, wanted, path: `${field}.name`, value: name, matched: false }
    : { field, wanted, path: `${field}.id`, value: id, matched: false };
}

/** The route's checks in order, stopping at the first that fails. */
function checkRoute(detail: LookoutEventDetail | Detail, route: Route): { checks: FieldCheck[]; failed?: FieldCheck } {
  const checks: FieldCheck[] = [];
  for (const field of MATCH_FIELDS) {
    const wanted = route.match[field];
    if (!wanted?.length) continue;
    const check = checkField(detail, field, wanted);
    if (!check.matched) return { checks, failed: check };
    checks.push(check);
  }
  return { checks };
}

/** Every route, matched or not, with why; `continue: false` ends matching after the route that says it. */
export function explainRoutes(detail: LookoutEventDetail | Detail, routes: readonly Route[]): RoutesExplained {
  const out: RouteOutcome[] = [];
  let stoppedBy: string | undefined;
  routes.forEach((route, index) => {
    if (stoppedBy !== undefined) {
      out.push({ outcome: "not_considered", route, index, stoppedBy });
      return;
    }
    const { checks, failed } = checkRoute(detail, route);
    if (failed) {
      out.push({ outcome: "not_matched", route, index, failed });
      return;
    }
    const stops = !route.continue;
    out.push({ outcome: "matched", decision: { route, index, receivers: routeReceivers(route), why: checks, stops } });
    if (stops) stoppedBy = route.name;
  });
  const receivers = distinctReceivers(out.flatMap((o) => (o.outcome === "matched" ? o.decision.receivers : [])));
  return { routes: out, receivers };
}

/** The routes an event matches, in order. */
export function routeEvent(detail: LookoutEventDetail | Detail, routes: readonly Route[]): RouteDecision[] {
  return explainRoutes(detail, routes).routes.flatMap((o) => (o.outcome === "matched" ? [o.decision] : []));
}

/** Who gets an event: a route's name (or `default`) and its receivers. */
export interface RouteDelivery {
  route: string;
  receivers: Receiver[];
}

/**
 * The routes an event matches, or, when it matches none, the default route (notify.default), like
 * Alertmanager's root route. A route that matches with no receivers (continue: false) silences on
 * purpose: the default route does not take that event. The same decision in the cloud: the default
 * route's rule takes every event and the notify handler keeps only what this gives `default`.
 */
export function decideRoutes(detail: LookoutEventDetail | Detail, routes: readonly Route[], notify: Pick<NotifySettings, "default">): RouteDelivery[] {
  const matched = routeEvent(detail, routes);
  if (matched.length) return matched.map((d) => ({ route: d.route.name, receivers: d.receivers }));
  const receivers = receiversOf(notify.default);
  return receivers.length ? [{ route: DEFAULT_ROUTE, receivers }] : [];
}

/** One line about a check, for people: `environment.name "production" is one of prod, production`. */
export function describeCheck(c: FieldCheck): string {
  const wanted = c.wanted.length === 1 ? c.wanted[0]! : `one of ${c.wanted.join(", ")}`;
  if (c.value === undefined) return `${c.path} is absent from the event (route wants ${wanted})`;
  if (c.matched && c.field === "transition" && !c.wanted.includes(c.value)) return `${c.path} ${JSON.stringify(c.value)} follows ${wanted}`;
  return `${c.path} ${JSON.stringify(c.value)} ${c.matched ? "is" : "is not"} ${wanted}`;
}
