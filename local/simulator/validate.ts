/**
 * Routing and request validation, both driven by the spec's endpoint table (./endpoints.ts):
 * path templates, path parameter formats, query parameter formats and body schemas are not repeated here.
 */
import { describeIssue as reasonOf } from "../../lib/model/issues.js";
import type * as z from "zod/mini";
import { checkParam, pathParamFormat, pathPattern, type EndpointDef } from "../../lib/platform/endpoints.js";
import { specEndpointNames as endpointNames, specEndpoints as endpoints, type SpecEndpointName as EndpointName } from "./endpoints.js";
import { badRequest } from "./error-responses.js";

interface Route {
  name: EndpointName;
  def: EndpointDef;
  pattern: RegExp;
}

const routes: Route[] = endpointNames.map((name) => {
  const def: EndpointDef = endpoints[name];
  return { name, def, pattern: pathPattern(def.path) };
});

export type RouteMatch =
  | { kind: "ok"; name: EndpointName; def: EndpointDef; rawParams: Record<string, string> }
  | { kind: "method-not-allowed"; allow: string[] }
  | { kind: "not-found" };

export function matchRoute(method: string, pathname: string): RouteMatch {
  const allow: string[] = [];
  for (const r of routes) {
    const m = r.pattern.exec(pathname);
    if (!m) continue;
    if (r.def.method === method) return { kind: "ok", name: r.name, def: r.def, rawParams: { ...m.groups } };
    allow.push(r.def.method);
  }
  return allow.length > 0 ? { kind: "method-not-allowed", allow } : { kind: "not-found" };
}

/** Decodes and checks path parameters against their formats. */
export function checkPathParams(def: EndpointDef, raw: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      throw badRequest(`${name}: is not correctly percent-encoded`);
    }
    const reason = checkParam(pathParamFormat(def, name), decoded);
    if (reason) throw badRequest(`${name}: ${reason}`);
    out[name] = decoded;
  }
  return out;
}

/** Checks the declared query parameters (unknown ones are ignored, as the platform does). */
export function checkQuery(def: EndpointDef, search: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, format] of Object.entries(def.query ?? {})) {
    const value = search.get(name);
    if (value === null) continue;
    const reason = checkParam(format, value);
    if (reason) throw badRequest(`${name}: ${reason}`);
    out[name] = value;
  }
  return out;
}

/** Parses and validates a request body with the endpoint's schema; undefined for endpoints without one. */
export function checkBody(def: EndpointDef, raw: string): unknown {
  if (!def.body) return undefined;
  let json: unknown;
  if (raw.trim() !== "") {
    try {
      json = JSON.parse(raw);
    } catch (err) {
      throw badRequest(`body: malformed JSON (${(err as Error).message})`);
    }
  }
  const result = def.body.safeParse(json);
  if (!result.success) throw badRequest(result.error.issues.map((i) => describeIssue(i, json)).join("; "));
  return result.data;
}


/** `field: reason` for one zod issue, in the words a client developer needs. */
export function describeIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const where = issue.path.map(String).join(".") || "body";
  return `${where}: ${reasonOf(issue, input)}`;
}
