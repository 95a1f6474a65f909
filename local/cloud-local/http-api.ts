/**
 * The packaged stack's HTTP API (API Gateway HTTP API, payload format 2.0) on one machine
 * (docs/cloud-local.md, "The HTTP API"): its routes read from the template, each request routed as API
 * Gateway routes it, turned into the event its Lambda integration gets and the function's answer into
 * API Gateway's (local/runtime/http-api-payload.ts), with its own answers for no route (404), a function error
 * (500) and an integration timeout (503).
 *
 * AWS_IAM authorization is not enforced: no SigV4 signature is checked, and the event carries a local
 * caller identity in its place. So it listens on this machine only and refuses a Host that is not this
 * server (as `lookout audit --serve` does, local/runtime/audit-server.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { refusedHost } from "../runtime/audit-server.js";
import { answerOf, gatewayAnswer, type HttpAnswer, httpApiEvent, type IamCaller, newRequestId, rawPathOf, readBody, writeAnswer } from "../runtime/http-api-payload.js";
import type { Activity, Invoke } from "./call-function.js";
import { type Cfn, type Template, TemplateError } from "./template.js";

/** A route of the API and the function its integration invokes. */
export interface HttpRoute {
  /** `GET /explain/{id}`, `ANY /{proxy+}` or `$default`. */
  routeKey: string;
  functionName: string;
  /** The integration's `TimeoutInMillis`: no answer by then is a 503. */
  timeoutMs: number;
  /** `NONE` (the default) or `AWS_IAM` (not checked here: the event gets a local caller). */
  authorization?: string;
}

export interface HttpApiOptions {
  routes: HttpRoute[];
  invoke: Invoke;
  /** 0 (the default) picks a free one. */
  port?: number;
  /** A loopback address only; default 127.0.0.1. */
  host?: string;
  /** The API's id, the event's `apiId` and `domainPrefix`. */
  apiId: string;
  accountId: string;
  /** The stack's region. The event's `domainName` is not `<apiId>.execute-api.<region>.amazonaws.com` but the Host this server was asked by, as the cloud's is the Host it was asked by. */
  region: string;
  activity?: Activity;
}

export interface HttpApi {
  /** http://127.0.0.1:<port>/ */
  url: string;
  close(): Promise<void>;
}

/** A route key taken apart: its method (`ANY` for all) and path segments; none for `$default`. */
interface CompiledRoute extends HttpRoute {
  method: string;
  segments: string[];
  greedy: boolean;
}

const isVariable = (segment: string) => /^\{[^{}]+\}$/.test(segment);

function compile(route: HttpRoute): CompiledRoute {
  if (route.routeKey === "$default") return { ...route, method: "ANY", segments: [], greedy: false };
  const m = /^([A-Z]+) (\/\S*)$/.exec(route.routeKey);
  if (!m) throw new Error(`route key ${JSON.stringify(route.routeKey)} is not "METHOD /path" or "$default"`);
  // Split as a request's path is: `/` is one empty segment, and a trailing slash is one more.
  const segments = m[2]!.split("/").slice(1);
  const greedyAt = segments.findIndex((s) => /^\{[^{}]+\+\}$/.test(s));
  if (greedyAt >= 0 && greedyAt !== segments.length - 1) throw new Error(`route key ${route.routeKey}: a greedy path variable must end the path`);
  return { ...route, method: m[1]!, segments, greedy: greedyAt >= 0 };
}

const decoded = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The path variables of `path` under the route, or undefined when the route does not match it. */
function match(route: CompiledRoute, method: string, path: string[]): Record<string, string> | undefined {
  if (route.method !== "ANY" && route.method !== method) return undefined;
  const fixed = route.greedy ? route.segments.slice(0, -1) : route.segments;
  if (route.greedy ? path.length <= fixed.length : path.length !== fixed.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, s] of fixed.entries()) {
    if (isVariable(s)) {
      if (!path[i]) return undefined;
      params[s.slice(1, -1)] = decoded(path[i]!);
    } else if (s !== path[i]) return undefined;
  }
  if (route.greedy) {
    const rest = path.slice(fixed.length).join("/");
    if (!rest) return undefined;
    params[route.segments.at(-1)!.slice(1, -2)] = decoded(rest);
  }
  return params;
}

/**
 * Which of two matching routes is the more specific (negative: `a`), as API Gateway chooses: a full
 * match before a greedy one; then the longer greedy prefix; then, segment by segment, a fixed one
 * before a variable; then a method before ANY.
 */
function moreSpecific(a: CompiledRoute, b: CompiledRoute): number {
  if (a.greedy !== b.greedy) return a.greedy ? 1 : -1;
  if (a.segments.length !== b.segments.length) return b.segments.length - a.segments.length;
  for (let i = 0; i < a.segments.length; i++) {
    const va = isVariable(a.segments[i]!);
    if (va !== isVariable(b.segments[i]!)) return va ? 1 : -1;
  }
  return (a.method === "ANY" ? 1 : 0) - (b.method === "ANY" ? 1 : 0);
}

/** The route API Gateway picks for a request, with its path variables; `$default` last. */
function selectRoute(routes: readonly CompiledRoute[], method: string, rawPath: string): { route: CompiledRoute; pathParameters: Record<string, string> } | undefined {
  const path = rawPath.split("/").slice(1);
  const candidates = routes
    .filter((r) => r.routeKey !== "$default")
    .flatMap((route) => {
      const pathParameters = match(route, method, path);
      return pathParameters ? [{ route, pathParameters }] : [];
    })
    .sort((a, b) => moreSpecific(a.route, b.route));
  const fallback = routes.find((r) => r.routeKey === "$default");
  return candidates[0] ?? (fallback ? { route: fallback, pathParameters: {} } : undefined);
}

/** The caller an AWS_IAM route's event names: no signature is checked, so a caller of this machine. */
const localCaller = (accountId: string): IamCaller => ({
  accessKey: "CLOUDLOCAL", accountId, callerId: "CLOUDLOCAL", cognitoIdentity: null, principalOrgId: null,
  userArn: `arn:aws:iam::${accountId}:user/cloud-local`, userId: "CLOUDLOCAL",
});

/** The request as an activity line shows it: a long query cut short. */
const shownUrl = (url = "/") => (url.length > 80 ? `${url.slice(0, 79)}…` : url);

const LOOPBACK = /^(127(\.\d{1,3}){3}|::1|localhost)$/;

/** Runs the function within the integration's timeout: its answer, or why API Gateway answers instead. */
async function integrate(opts: HttpApiOptions, route: CompiledRoute, event: unknown): Promise<{ answer: HttpAnswer; why?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), route.timeoutMs)));
  // The function runs on after a timeout, as in Lambda; only the answer is not awaited.
  const invoked = opts.invoke(route.functionName, event).catch((err: unknown) => ({ ok: false as const, errorType: "Error", errorMessage: (err as Error).message, ms: 0 }));
  const outcome = await Promise.race([invoked, timeout]).finally(() => clearTimeout(timer));
  if (outcome === "timeout") return { answer: gatewayAnswer(503, "Service Unavailable"), why: `no answer within the integration's ${route.timeoutMs} ms` };
  if (!outcome.ok) return { answer: gatewayAnswer(500, "Internal Server Error"), why: `${outcome.errorType}: ${outcome.errorMessage}` };
  const { answer, malformed } = answerOf(outcome.payload);
  return malformed ? { answer, why: `a response API Gateway cannot read: ${malformed}` } : { answer };
}

/** Serves the routes on 127.0.0.1 until closed. */
export async function startHttpApi(opts: HttpApiOptions): Promise<HttpApi> {
  const host = opts.host ?? "127.0.0.1";
  if (!LOOPBACK.test(host)) throw new Error(`the HTTP API listens on this machine only (no SigV4 is checked here), not on ${host}`);
  const routes = opts.routes.map(compile);
  let port = 0;
  /** Who answered (the function, or API Gateway itself), with what and why. */
  type Served = { by: string; status: number; why?: string };
  const serve = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<Served> => {
    const selected = selectRoute(routes, req.method ?? "GET", rawPathOf(req.url));
    if (!selected) {
      writeAnswer(res, gatewayAnswer(404, "Not Found"), requestId);
      return { by: "HTTP API", status: 404, why: "no route" };
    }
    const { route, pathParameters } = selected;
    const event = httpApiEvent(req, await readBody(req), {
      routeKey: route.routeKey, pathParameters, accountId: opts.accountId, apiId: opts.apiId, requestId,
      ...(route.authorization === "AWS_IAM" ? { iam: localCaller(opts.accountId) } : {}),
    });
    const { answer, why } = await integrate(opts, route, event);
    writeAnswer(res, answer, requestId);
    return { by: route.functionName, status: answer.statusCode, ...(why ? { why } : {}) };
  };
  const server = createServer((req, res) => {
    const started = Date.now();
    const requestId = newRequestId();
    const line = ({ by, status, why }: Served) =>
      opts.activity?.(`${by} ← ${req.method} ${shownUrl(req.url)} ${status}${why ? `: ${why}` : ""} (${Date.now() - started} ms)`);
    res.setHeader("apigw-requestid", requestId);
    if (refusedHost(req, res, port, host)) return line({ by: "HTTP API", status: 403, why: `Host ${JSON.stringify(req.headers.host ?? "")} is not this server` });
    serve(req, res, requestId).then(line, (err: unknown) => {
      if (!res.headersSent) writeAnswer(res, gatewayAnswer(500, "Internal Server Error"), requestId);
      else res.end();
      line({ by: "HTTP API", status: 500, why: (err as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  ({ port } = server.address() as AddressInfo);
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Resources = Template["Resources"];

/** The logical id a route's `Target` names (`integrations/<Ref>`, as serverless writes it with Fn::Join, or with Fn::Sub). */
function integrationIdOf(target: unknown): string | undefined {
  if (!target || typeof target !== "object") return undefined;
  const t = target as Cfn;
  if (typeof t.Ref === "string") return t.Ref;
  const sub = typeof t["Fn::Sub"] === "string" ? /^integrations\/\$\{([^}.!]+)\}$/.exec(t["Fn::Sub"]) : null;
  if (sub) return sub[1];
  const join = t["Fn::Join"] as [string, unknown[]] | undefined;
  if (Array.isArray(join) && Array.isArray(join[1])) return join[1].map(integrationIdOf).find((id) => id !== undefined);
  return undefined;
}

/**
 * The routes of the template's HTTP API (AWS::ApiGatewayV2::Api, Route, Integration), each with the
 * function its integration invokes. `resolveFunctionName` turns an `IntegrationUri` (or a permission's
 * `FunctionName`) into a function's name: after provision(), `(v, path) => functionNameOf(resolver.resolve(v, path))`.
 * What cloud-local cannot serve as API Gateway would fails naming its path in the template: a route
 * without an integration, an integration that is not AWS_PROXY with payload 2.0, an authorizer other
 * than AWS_IAM, a stage other than `$default`, a function that grants API Gateway no invoke permission.
 */
export function routesFromTemplate(resources: Resources, resolveFunctionName: (value: unknown, path: string) => string): HttpRoute[] {
  const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
  const apis = ofType("AWS::ApiGatewayV2::Api").filter(([, r]) => r.Properties?.ProtocolType === "HTTP");
  if (apis.length > 1) throw new TemplateError(`Resources.${apis[1]![0]}`, `a second HTTP API (after ${apis[0]![0]}): cloud-local serves one`);
  const apiId = apis[0]?.[0];
  if (apiId === undefined) return [];
  const ofApi = (r: { Properties?: Cfn }) => (r.Properties?.ApiId as Cfn | undefined)?.Ref === apiId;
  for (const [id, stage] of ofType("AWS::ApiGatewayV2::Stage").filter(([, r]) => ofApi(r))) {
    // A named stage prefixes every path (/prod/events); only $default is served at the root.
    if (stage.Properties?.StageName !== "$default") throw new TemplateError(`Resources.${id}.Properties.StageName`, `stage ${JSON.stringify(stage.Properties?.StageName)}: cloud-local serves the $default stage only`);
  }
  // API Gateway may invoke a function only by its permission; without one each request is a 500 in the cloud.
  const invokable = new Set(ofType("AWS::Lambda::Permission")
    .filter(([, r]) => r.Properties?.Principal === "apigateway.amazonaws.com" && r.Properties?.Action === "lambda:InvokeFunction")
    .map(([id, r]) => resolveFunctionName(r.Properties!.FunctionName, `Resources.${id}.Properties.FunctionName`)));
  return ofType("AWS::ApiGatewayV2::Route").filter(([, r]) => ofApi(r)).map(([id, r]) => {
    const path = `Resources.${id}.Properties`;
    const p = r.Properties ?? {};
    const integrationId = integrationIdOf(p.Target);
    const integration = integrationId === undefined ? undefined : resources[integrationId];
    if (!integration || integration.Type !== "AWS::ApiGatewayV2::Integration") {
      throw new TemplateError(`${path}.Target`, p.Target === undefined ? "the route has no integration" : `integrations/${integrationId ?? "?"}: no AWS::ApiGatewayV2::Integration of that name in the template`);
    }
    const at = `Resources.${integrationId}.Properties`;
    const ip = integration.Properties ?? {};
    if (ip.IntegrationType !== "AWS_PROXY") throw new TemplateError(`${at}.IntegrationType`, `${ip.IntegrationType}: cloud-local serves AWS_PROXY (Lambda) integrations only`);
    if (String(ip.PayloadFormatVersion) !== "2.0") throw new TemplateError(`${at}.PayloadFormatVersion`, `${ip.PayloadFormatVersion}: cloud-local serves payload format 2.0 only`);
    const authorization = String(p.AuthorizationType ?? "NONE");
    if (authorization !== "NONE" && authorization !== "AWS_IAM") throw new TemplateError(`${path}.AuthorizationType`, `${authorization} authorizers are not emulated by cloud-local`);
    const functionName = resolveFunctionName(ip.IntegrationUri, `${at}.IntegrationUri`);
    if (!invokable.has(functionName)) throw new TemplateError(`${at}.IntegrationUri`, `${functionName} grants apigateway.amazonaws.com no lambda:InvokeFunction (AWS::Lambda::Permission): API Gateway could not invoke it`);
    const route: HttpRoute = { routeKey: String(p.RouteKey), functionName, timeoutMs: Number(ip.TimeoutInMillis ?? 30_000), authorization };
    // A bad key fails here, with its path, rather than when the API starts.
    try {
      compile(route);
    } catch (err) {
      throw new TemplateError(`${path}.RouteKey`, (err as Error).message);
    }
    return route;
  });
}
