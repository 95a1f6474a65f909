/**
 * Link templates (`notify.links`, `routes[].links`, `watch[].applications[].links`): a URL with
 * placeholders for the ids an event carries, checked when the configuration loads and filled when an
 * event is shown. One list of placeholders serves both, so a template that loads can always be filled.
 */
import type { LookoutEventDetail } from "../model/event.js";

/** Each placeholder and where an event holds its value. */
export const LINK_PLACEHOLDERS: Readonly<Record<string, (d: LookoutEventDetail) => string | undefined>> = {
  "organization.id": (d) => d.organization?.id,
  "project.id": (d) => d.project?.id,
  "environment.id": (d) => d.environment?.id,
  "service.id": (d) => d.service?.id,
  "service.name": (d) => d.service?.name,
  "cluster.id": (d) => d.cluster?.id,
  "webhook.id": (d) => d.webhook?.id,
  execution_id: (d) => d.deployment?.execution_id,
  "record.id": (d) => d.record?.id,
  "alert.id": (d) => d.id,
};

const PLACEHOLDER = /\{([^{}]*)\}/g;

const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s);
    return (u.protocol === "http:" || u.protocol === "https:") && u.host !== "";
  } catch {
    return false;
  }
};

/** What is wrong with a template, or undefined: an unknown placeholder, a stray brace, not absolute http(s). */
export function linkTemplateProblem(template: string): string | undefined {
  const names = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]!);
  const unknown = names.find((n) => !(n in LINK_PLACEHOLDERS));
  if (unknown !== undefined) return `unknown placeholder {${unknown}}; known: ${Object.keys(LINK_PLACEHOLDERS).map((n) => `{${n}}`).join(", ")}`;
  const rest = template.replace(PLACEHOLDER, "");
  if (/[{}]/.test(rest)) return "has a brace that opens or closes no placeholder";
  // A sample value in each placeholder: a URL that is not absolute http(s) with it never will be.
  if (!isHttpUrl(template.replace(PLACEHOLDER, "x"))) return "must be an absolute http(s) URL (https://…)";
  return undefined;
}

/** The template filled with the event's values, URL-encoded; undefined when the event lacks one of them. */
export function fillLinkTemplate(template: string, detail: LookoutEventDetail): string | undefined {
  let missing = false;
  const url = template.replace(PLACEHOLDER, (_, name: string) => {
    const value = LINK_PLACEHOLDERS[name]?.(detail);
    if (typeof value !== "string" || value === "") missing = true;
    return missing ? "" : encodeURIComponent(value!);
  });
  return !missing && isHttpUrl(url) ? url : undefined;
}
