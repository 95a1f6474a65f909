/**
 * The endpoints of the platform API that Lookout reads, as data, and what an endpoint table is. The
 * client builds its methods from a table; the simulator routes and validates requests with the same
 * definitions, so the two cannot drift apart. The spec's other 15 endpoints (writes, reference lists)
 * Lookout never calls: the simulator defines them (local/simulator/endpoints.ts), and its table of all
 * 21 is what the client's contract tests call.
 */
import * as z from "zod/mini";
import * as s from "./schemas.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

/** `{a}` segments of a path template, as a union of names. */
export type PathParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | PathParamNames<Rest>
  : never;

export type ParamFormat = "uuid" | "string" | "int";

export interface EndpointDef<
  P extends string = string,
  B extends z.ZodMiniType | undefined = z.ZodMiniType | undefined,
  R extends z.ZodMiniType | undefined = z.ZodMiniType | undefined,
  Q extends Record<string, ParamFormat> = Record<string, ParamFormat>,
  I extends z.ZodMiniType | undefined = z.ZodMiniType | undefined,
> {
  /** The number the spec gives the endpoint (its table under "Endpoints"). */
  readonly number: number;
  readonly method: HttpMethod;
  readonly path: P;
  /** Format of each path parameter; every one not listed is a uuid. */
  readonly pathFormats?: Partial<Record<PathParamNames<P>, ParamFormat>>;
  readonly query?: Q;
  readonly body?: B;
  /** Absent when the success response has no body. */
  readonly response?: R;
  /** For list responses: the schema of one item of `results`, so a list can be read item by item. */
  readonly items?: I;
  /** A POST that changes nothing and so may be retried after a timeout or 5xx (GET, PUT, DELETE always may). */
  readonly idempotent?: boolean;
  /** What the simulator answers on success; the client accepts any 2xx. */
  readonly successStatus: number;
  readonly summary: string;
}

/** An endpoint's definition, its literal types kept: what a table is built with. */
export const def = <
  const P extends string,
  B extends z.ZodMiniType | undefined = undefined,
  R extends z.ZodMiniType | undefined = undefined,
  const Q extends Record<string, ParamFormat> = {},
  I extends z.ZodMiniType | undefined = undefined,
>(
  d: EndpointDef<P, B, R, Q, I>,
) => d;

export const endpoints = {
  listWebhookEvents: def({
    number: 7, method: "GET", path: "/organization/{organizationId}/webhook/{webhookId}/event",
    response: s.resultsOf(s.WebhookEvent), items: s.WebhookEvent, successStatus: 200,
    summary: "list the deliveries of a webhook",
  }),
  listDeploymentHistory: def({
    number: 9, method: "GET", path: "/application/{applicationId}/deploymentHistoryV2",
    // pageSize is the real name of the page-size parameter (docs/platform.md); startId is in the spec's
    // prose but does not page on the real service, so it is accepted and passed on, nothing more.
    query: { pageSize: "int", startId: "string" },
    response: s.DeploymentHistoryPage, items: s.DeploymentHistoryItem, successStatus: 200,
    summary: "list the deployments of an application",
  }),
  listClusterLogs: def({
    number: 10, method: "GET", path: "/organization/{organizationId}/cluster/{clusterId}/logs",
    response: s.resultsOf(s.ClusterLogEntry), items: s.ClusterLogEntry, successStatus: 200,
    summary: "list the logs of a cluster",
  }),
  listOrganizationMembers: def({
    number: 14, method: "GET", path: "/organization/{organizationId}/member", response: s.resultsOf(s.Member), items: s.Member,
    successStatus: 200, summary: "list the members of an organization",
  }),
  listProjects: def({
    number: 15, method: "GET", path: "/organization/{organizationId}/project", response: s.resultsOf(s.Project), items: s.Project,
    successStatus: 200, summary: "list the projects of an organization",
  }),
  listApplicationCommits: def({
    number: 16, method: "GET", path: "/application/{applicationId}/commit",
    // startId: the commits after (older than) that one; gitCommitId: only that commit (docs/platform.md).
    query: { startId: "string", gitCommitId: "string" },
    response: s.resultsOf(s.Commit), items: s.Commit, successStatus: 200, summary: "list the last 100 commits of an application",
  }),
} as const;

/** A table of endpoints by name: Lookout's (below), or the simulator's of the whole spec. */
export type EndpointTable = Readonly<Record<string, EndpointDef>>;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export const endpointNames = Object.keys(endpoints) as EndpointName[];

type PathOf<T extends EndpointTable, K extends keyof T> = T[K]["path"];
type Infer<U> = U extends z.ZodMiniType ? z.infer<U> : undefined;
type QueryOf<T extends EndpointTable, K extends keyof T> = T[K] extends { query?: infer Q }
  ? [keyof Q] extends [never]
    ? { query?: undefined }
    : { query?: { [P in keyof Q]?: Q[P] extends "int" ? number : string } }
  : { query?: undefined };
type BodyOf<T extends EndpointTable, K extends keyof T> = T[K] extends { body?: infer B }
  ? B extends z.ZodMiniType
    ? { body: z.infer<B> }
    : { body?: undefined }
  : { body?: undefined };

/** What a call of endpoint K of table T takes: its path parameters, its query and its body. */
export type EndpointInput<K extends keyof T, T extends EndpointTable = Endpoints> = ([PathParamNames<PathOf<T, K>>] extends [never]
  ? { path?: undefined }
  : { path: Record<PathParamNames<PathOf<T, K>>, string> }) &
  QueryOf<T, K> &
  BodyOf<T, K>;

/** The endpoints of table T whose lists can be read item by item. */
export type ListEndpointName<T extends EndpointTable = Endpoints> = {
  [K in keyof T]: T[K] extends { items?: infer I } ? (I extends z.ZodMiniType ? K : never) : never;
}[keyof T];
export type ListItemOf<K extends keyof T, T extends EndpointTable = Endpoints> = T[K] extends { items?: infer I } ? Infer<I> : never;

/** What endpoint K of table T answers on success. */
export type EndpointOutput<K extends keyof T, T extends EndpointTable = Endpoints> = T[K] extends { response?: infer R } ? Infer<R> : undefined;

/** The names of the path parameters of a template, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

export function pathParamFormat(endpoint: EndpointDef, name: string): ParamFormat {
  return (endpoint.pathFormats as Record<string, ParamFormat> | undefined)?.[name] ?? "uuid";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a path or query value against its format; returns a reason or undefined. */
export function checkParam(format: ParamFormat, value: string): string | undefined {
  if (format === "uuid" && !UUID.test(value)) return "is not a uuid";
  if (format === "int" && !/^\d+$/.test(value)) return "is not a whole number";
  if (format === "string" && value.length === 0) return "is empty";
  return undefined;
}

/** Fills a path template; values are URI-encoded. */
export function fillPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""));
}

/** A matcher for the simulator's router: the template as a regular expression with named groups. */
export function pathPattern(path: string): RegExp {
  const src = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{(\w+)\\?\}/g, "(?<$1>[^/]+)");
  return new RegExp(`^${src}$`);
}
