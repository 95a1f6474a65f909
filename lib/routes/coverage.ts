/**
 * Which kinds of event reach nobody: for each kind/transition (and the severity Lookout gives it), what
 * the routes do with it, as `lookout check-config` reports. Pure. Severity follows from kind and
 * transition (lib/model/event.ts severityOf), so these pairs are every kind of event Lookout raises.
 */
import { type EventKind, type Severity, type Transition, detailTypeOf, severityOf, KINDS } from "../model/event.js";
import { TRANSITIONS } from "../config/routes.js";
import { checkField } from "./match.js";
import { REF_FIELDS, type NotifySettings, type Route, receiversOf, routeReceivers } from "../config/route-types.js";

export interface Coverage {
  kind: EventKind;
  transition: Transition;
  severity: Severity;
  /**
   * `routed`: a route with receivers takes every such event. `partly`: only routes that also match on
   * organization/project/environment/service take it (`by`), so the rest reach nobody. `default`: no
   * route, notify.default takes it. `silenced`: a route without receivers stops it on purpose (`by`).
   * `nobody`: it reaches nobody.
   */
  reach: "routed" | "partly" | "default" | "silenced" | "nobody";
  by?: string[];
}

/** Every kind/transition pair that exists. */
export function eventKinds(): Array<{ kind: EventKind; transition: Transition; severity: Severity }> {
  const out: Array<{ kind: EventKind; transition: Transition; severity: Severity }> = [];
  for (const kind of KINDS) {
    for (const transition of TRANSITIONS) {
      try {
        detailTypeOf(kind, transition);
      } catch {
        continue;
      }
      out.push({ kind, transition, severity: severityOf(kind, transition) });
    }
  }
  return out;
}

export function coverage(routes: readonly Route[], notify: Pick<NotifySettings, "default">): Coverage[] {
  const hasDefault = receiversOf(notify.default).length > 0;
  return eventKinds().map((k) => {
    const detail = { kind: k.kind, transition: k.transition, severity: k.severity };
    const partly: string[] = [];
    for (const route of routes) {
      if ((["kind", "transition", "severity"] as const).some((f) => route.match[f] && !checkField(detail, f, route.match[f]!).matched)) continue;
      const narrowed = REF_FIELDS.some((f) => route.match[f]);
      const receivers = routeReceivers(route).length > 0;
      if (narrowed) {
        if (receivers) partly.push(route.name);
        continue;
      }
      if (receivers) return { ...k, reach: "routed" as const };
      if (!route.continue) return { ...k, reach: "silenced" as const, by: [route.name] };
    }
    // Events no route takes (any, when none is narrowed) go to the default route.
    if (hasDefault) return { ...k, reach: "default" as const };
    return partly.length ? { ...k, reach: "partly" as const, by: partly } : { ...k, reach: "nobody" as const };
  });
}

/** `cluster_log/cluster_error (error) reaches nobody: add a route or notify.default`, or undefined when it is reached. */
export function coverageLine(c: Coverage): string | undefined {
  const what = `${c.kind}/${c.transition} (${c.severity})`;
  if (c.reach === "nobody") return `${what} reaches nobody: add a route or notify.default`;
  if (c.reach === "partly") {
    return `${what} reaches nobody unless routes ${c.by!.join(", ")} match its organization/project/environment/service: add a route or notify.default`;
  }
  return undefined;
}
