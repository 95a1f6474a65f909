/**
 * The 21 endpoints of the platform API, as data. The client builds its methods from this table and the
 * simulator routes and validates requests with it, so the two cannot drift apart.
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

const def = <
  const P extends string,
  B extends z.ZodMiniType | undefined = undefined,
  R extends z.ZodMiniType | undefined = undefined,
  const Q extends Record<string, ParamFormat> = {},
  I extends z.ZodMiniType | undefined = undefined,
>(
  d: EndpointDef<P, B, R, Q, I>,
) => d;

export const endpoints = {
  createJobSecret: def({
    number: 1, method: "POST", path: "/job/{jobId}/secret", body: s.SecretRequest, response: s.Secret,
    successStatus: 201, summary: "add a secret to a job",
  }),
  restartServices: def({
    number: 2, method: "POST", path: "/environment/{environmentId}/service/restart-service",
    body: s.RestartServicesRequest, response: s.ServiceStatus, successStatus: 200,
    summary: "update and reboot selected services of an environment",
  }),
  resolvePlatformComponent: def({
    number: 3, method: "POST",
    path: "/organization/{organizationId}/cluster/{clusterId}/platformBinding/component/{componentKey}/resolve",
    pathFormats: { componentKey: "string" }, body: s.ResolveComponentRequest, idempotent: true,
    response: s.PlatformComponentResolution, successStatus: 200,
    summary: "compute the fields and requirements of a platform component",
  }),
  editVendor1Credentials: def({
    number: 4, method: "PUT", path: "/organization/{organizationId}/vendor1/credentials/{credentialsId}",
    body: s.Vendor1CredentialsRequest, response: s.CredentialsRecord, successStatus: 200,
    summary: "edit vendor1 credentials",
  }),
  createVendor1Credentials: def({
    number: 5, method: "POST", path: "/organization/{organizationId}/vendor1/credentials",
    body: s.Vendor1CredentialsRequest, response: s.CredentialsRecord, successStatus: 201,
    summary: "create vendor1 credentials",
  }),
  createDatabaseBackup: def({
    number: 6, method: "POST", path: "/database/{databaseId}/backup", body: s.BackupRequest,
    response: s.Backup, successStatus: 201, summary: "create a database backup",
  }),
  listWebhookEvents: def({
    number: 7, method: "GET", path: "/organization/{organizationId}/webhook/{webhookId}/event",
    response: s.resultsOf(s.WebhookEvent), items: s.WebhookEvent, successStatus: 200,
    summary: "list the deliveries of a webhook",
  }),
  listEnvironmentVariables: def({
    number: 8, method: "GET", path: "/environment/{environmentId}/environmentVariable",
    response: s.resultsOf(s.EnvironmentVariable), successStatus: 200,
    summary: "list the variables of an environment",
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
  moveDeploymentStageAfter: def({
    number: 11, method: "PUT", path: "/deploymentStage/{deploymentStageId}/moveAfter/{stageId}",
    response: s.resultsOf(s.DeploymentStage), successStatus: 200,
    summary: "move a deployment stage after another",
  }),
  getServiceDeploymentStage: def({
    number: 12, method: "GET", path: "/service/{serviceId}/deploymentStage", response: s.DeploymentStage,
    successStatus: 200, summary: "get the deployment stage of a service",
  }),
  getDeploymentStage: def({
    number: 13, method: "GET", path: "/deploymentStage/{deploymentStageId}", response: s.DeploymentStage,
    successStatus: 200, summary: "get a deployment stage",
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
  listVendor3Regions: def({
    number: 17, method: "GET", path: "/vendor3/region", response: s.resultsOf(s.CloudRegion),
    successStatus: 200, summary: "list vendor3 regions",
  }),
  listVendor4Repositories: def({
    number: 18, method: "GET", path: "/account/vendor4/repository", response: s.resultsOf(s.GitRepository),
    successStatus: 200, summary: "list vendor4 repositories (deprecated)",
  }),
  listAvailableHelmRepositories: def({
    number: 19, method: "GET", path: "/availableHelmRepository", response: s.resultsOf(s.AvailableHelmRepository),
    successStatus: 200, summary: "list supported helm repository kinds",
  }),
  listAvailableIacVersions: def({
    number: 20, method: "GET", path: "/vendor5/availableVersion", response: s.resultsOf(s.AvailableIacVersion),
    successStatus: 200, summary: "list available infrastructure-as-code engine versions",
  }),
  deleteVendor2Credentials: def({
    number: 21, method: "DELETE", path: "/organization/{organizationId}/vendor2/credentials/{credentialsId}",
    successStatus: 204, summary: "delete vendor2 credentials",
  }),
} as const;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export const endpointNames = Object.keys(endpoints) as EndpointName[];

type PathOf<K extends EndpointName> = Endpoints[K]["path"];
type Infer<T> = T extends z.ZodMiniType ? z.infer<T> : undefined;
type QueryOf<K extends EndpointName> = Endpoints[K] extends { query?: infer Q }
  ? [keyof Q] extends [never]
    ? { query?: undefined }
    : { query?: { [P in keyof Q]?: Q[P] extends "int" ? number : string } }
  : { query?: undefined };
type BodyOf<K extends EndpointName> = Endpoints[K] extends { body?: infer B }
  ? B extends z.ZodMiniType
    ? { body: z.infer<B> }
    : { body?: undefined }
  : { body?: undefined };

/** What a call of endpoint K takes: its path parameters, its query and its body. */
export type EndpointInput<K extends EndpointName> = ([PathParamNames<PathOf<K>>] extends [never]
  ? { path?: undefined }
  : { path: Record<PathParamNames<PathOf<K>>, string> }) &
  QueryOf<K> &
  BodyOf<K>;

/** The endpoints whose lists can be read item by item. */
export type ListEndpointName = {
  [K in EndpointName]: Endpoints[K] extends { items?: infer I } ? (I extends z.ZodMiniType ? K : never) : never;
}[EndpointName];
export type ListItemOf<K extends ListEndpointName> = Endpoints[K] extends { items?: infer I } ? Infer<I> : never;

/** What endpoint K answers on success. */
export type EndpointOutput<K extends EndpointName> = Endpoints[K] extends { response?: infer R } ? Infer<R> : undefined;

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
