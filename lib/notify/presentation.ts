/**
 * How a route shows an event: the severity after the route's override, the mentions due, and the links
 * filled from the configured templates (docs/events.md, "Incidents"). Pure; built from the configuration.
 */
import { isClosing, type LookoutEventDetail, type Severity } from "../model/event.js";
import type { Config } from "../config/load.js";
import { fillLinkTemplate } from "../config/link-templates.js";
import { DEFAULT_ROUTE, type LinkTemplate, type Mention, type SeverityOverride } from "../config/route-types.js";
import { plainPresentation, type Presentation } from "./types.js";

/** The presentation of an event for the deliveries of one route (by name: a route, `default`, `fallback`). */
export type Presenter = (detail: LookoutEventDetail, route: string) => Presentation;

/** Until the configuration says more: the event as raised. */
export const plainPresenter: Presenter = (detail) => plainPresentation(detail);

/**
 * The route's severity for an event. An informational event (a cancellation) keeps its own; a close
 * takes the override as its opening did (its message is green whatever the severity).
 */
export function overriddenSeverity(detail: LookoutEventDetail, override: SeverityOverride | undefined): Severity {
  if (!override || detail.severity === "info") return detail.severity;
  if (typeof override === "string") return override;
  const type = detail.environment?.type?.toUpperCase();
  return (type !== undefined && override.byEnvironmentType[type]) || detail.severity;
}

/** `@here` → `<!here>`, `S0123ABCD` → `<!subteam^S0123ABCD>`, `U0123ABCD` → `<@U0123ABCD>`: written by Lookout only. */
export function slackMentionToken(who: string): string {
  if (who === "@here" || who === "@channel") return `<!${who.slice(1)}>`;
  return who.startsWith("S") ? `<!subteam^${who}>` : `<@${who}>`;
}

/**
 * Mentions for an event of this severity. An amendment updates messages that were already posted, a
 * repeat is only counted in its incident's thread, and a close ends what was called for: none calls anyone again.
 */
function mentionsFor(detail: LookoutEventDetail, severity: Severity, mention: Mention | undefined): string[] {
  if (!mention || !mention.on.includes(severity) || detail.amends !== undefined || detail.incident?.repeat || isClosing(detail.transition)) return [];
  return mention.who.map(slackMentionToken);
}

/** Templates by label, later lists overriding earlier ones (in the first one's place), filled; unfillable ones left out. */
function fillLinks(detail: LookoutEventDetail, lists: ReadonlyArray<readonly LinkTemplate[] | undefined>): Presentation["links"] {
  const byLabel = new Map<string, string>();
  for (const list of lists) for (const l of list ?? []) byLabel.set(l.label, l.template);
  return [...byLabel].flatMap(([label, template]) => {
    const url = fillLinkTemplate(template, detail);
    return url ? [{ label, url }] : [];
  });
}

/**
 * The presenter of a configuration. A route's name finds its severity, mention and links; `default`
 * is notify.default's mention; the fallback and digests show the event as raised with notify.links.
 */
export function presenterFor(config: Pick<Config, "routes" | "notify" | "watch">): Presenter {
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  const serviceLinks = new Map<string, LinkTemplate[]>();
  for (const w of config.watch) for (const a of w.applications) if (a.links) serviceLinks.set(a.id.toLowerCase(), a.links);
  return (detail, routeName) => {
    const route = routes.get(routeName);
    const severity = overriddenSeverity(detail, route?.severity);
    const mention = routeName === DEFAULT_ROUTE ? config.notify.default?.mention : route?.mention;
    const service = detail.service?.id?.toLowerCase();
    return {
      ...plainPresentation(detail),
      severity,
      mentions: mentionsFor(detail, severity, mention),
      links: fillLinks(detail, [config.notify.links, route?.links, service ? serviceLinks.get(service) : undefined]),
    };
  };
}
