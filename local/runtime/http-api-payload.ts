/**
 * API Gateway's HTTP API, payload format 2.0, both ways: the event a Lambda integration gets for a
 * node:http request, and the answer API Gateway makes of what the function returns. One builder for
 * `lookout audit --serve` (local/runtime/audit-server.ts) and the cloud-local HTTP API
 * (local/cloud-local/http-api.ts), so that both hand the handler what the cloud does.
 *
 * From AWS's documentation of the format, and where it is silent, from what AWS was seen to do:
 * repeated headers and query names joined with commas; the Cookie header taken out of `headers` into
 * `cookies`, one cookie an entry; the body as text only for text/*, JSON, XML and JavaScript, base64
 * otherwise; no `multiValueHeaders` in the answer (format 1.0 only: API Gateway ignores them here).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { randomBytes } from "node:crypto";
import type { APIGatewayEventRequestContextV2, APIGatewayProxyEventV2 } from "aws-lambda";

/** The caller API Gateway names after checking a request's SigV4 signature (routes with AWS_IAM). */
export interface IamCaller {
  accessKey: string;
  accountId: string;
  callerId: string;
  cognitoIdentity: null;
  principalOrgId: null;
  userArn: string;
  userId: string;
}

/** What of the API and of the route that matched goes into the event. */
export interface EventRoute {
  routeKey: string;
  pathParameters?: Record<string, string>;
  accountId: string;
  apiId: string;
  requestId: string;
  iam?: IamCaller;
}

/** An id of API Gateway's shape (`RL2XYiwjPHcEMEQ=`), for the event and the `apigw-requestid` header. */
export const newRequestId = (): string => randomBytes(11).toString("base64");

export async function readBody(req: IncomingMessage): Promise<Buffer>;
/** With a limit: undefined once the body passes it (the rest is not read; the caller answers 413). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined>;
export async function readBody(req: IncomingMessage, maxBytes = Infinity): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The only content types whose body API Gateway passes as text; any other, or none, is base64. */
const isTextBody = (contentType: string | undefined): boolean => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  return type.startsWith("text/") || ["application/json", "application/xml", "application/javascript"].includes(type);
};

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `12/Mar/2020:19:03:58 +0000`, as `requestContext.time` is written. */
export function requestTime(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** Values of a repeated name joined with commas, as format 2.0 has them (it has no multi-value fields). */
function joined(pairs: Iterable<[string, string]>): Record<string, string> {
  // A Map: a name such as `constructor` or `__proto__` is a name like any other.
  const out = new Map<string, string>();
  for (const [k, v] of pairs) out.set(k, out.has(k) ? `${out.get(k)},${v}` : v);
  return Object.fromEntries(out);
}

/** The path of a request target as sent, without its query. */
export const rawPathOf = (url: string | undefined): string => (url ?? "/").split("?")[0]!;

/** The event API Gateway sends the route's integration for this request (`body` read already). */
export function httpApiEvent(req: IncomingMessage, body: Buffer, route: EventRoute, now = new Date()): APIGatewayProxyEventV2 {
  const rawQueryString = (req.url ?? "").split("?").slice(1).join("?");
  const sourceIp = (req.socket.remoteAddress ?? "").replace(/^::ffff:/, "");
  const distinct = req.headersDistinct;
  const cookies = (distinct.cookie ?? []).flatMap((h) => h.split(";")).map((c) => c.trim()).filter(Boolean);
  const headers = joined(Object.entries(distinct).filter(([k]) => k !== "cookie").flatMap(([k, vs]) => (vs ?? []).map((v): [string, string] => [k, v])));
  // What API Gateway adds on its way to the function (the caller's own x-forwarded-for comes first).
  headers["x-forwarded-for"] = headers["x-forwarded-for"] ? `${headers["x-forwarded-for"]}, ${sourceIp}` : sourceIp;
  headers["x-forwarded-port"] = String(req.socket.localPort ?? "");
  headers["x-forwarded-proto"] = "http";
  headers["x-amzn-trace-id"] = `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${randomBytes(12).toString("hex")}`;
  const query = joined(new URLSearchParams(rawQueryString));
  const rawPath = rawPathOf(req.url);
  const requestContext: APIGatewayEventRequestContextV2 & { authorizer?: { iam: IamCaller } } = {
    accountId: route.accountId, apiId: route.apiId, domainName: headers.host ?? "", domainPrefix: route.apiId,
    http: { method: req.method ?? "GET", path: rawPath, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers["user-agent"] ?? "" },
    requestId: route.requestId, routeKey: route.routeKey, stage: "$default", time: requestTime(now), timeEpoch: now.getTime(),
    ...(route.iam ? { authorizer: { iam: route.iam } } : {}),
  };
  const text = isTextBody(headers["content-type"]);
  return {
    version: "2.0",
    routeKey: route.routeKey,
    rawPath,
    rawQueryString,
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    ...(route.pathParameters && Object.keys(route.pathParameters).length ? { pathParameters: route.pathParameters } : {}),
    requestContext,
    ...(body.length ? { body: text ? body.toString("utf8") : body.toString("base64") } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** An HTTP answer: API Gateway's of a function's payload, or its own (404, 500, 503). */
export interface HttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** Each a `set-cookie` header. */
  cookies: string[];
  body: Buffer;
}

/** API Gateway's own answers are JSON `{"message": …}`. */
export const gatewayAnswer = (statusCode: number, message: string): HttpAnswer => ({
  statusCode, headers: { "content-type": "application/json" }, cookies: [], body: Buffer.from(JSON.stringify({ message })),
});

const INTERNAL_ERROR = () => gatewayAnswer(500, "Internal Server Error");

/**
 * The answer API Gateway makes of a function's payload (format 2.0). Without `statusCode` the payload
 * is the body of a 200 (a string as it is, anything else as JSON); with one, its headers, cookies and
 * body (base64 decoded when it says so). A response API Gateway cannot read is its 500, with why.
 */
export function answerOf(payload: unknown): { answer: HttpAnswer; malformed?: string } {
  const structured = payload !== null && typeof payload === "object" && !Array.isArray(payload) && "statusCode" in payload;
  if (!structured) {
    const body = typeof payload === "string" ? payload : JSON.stringify(payload ?? null);
    return { answer: { statusCode: 200, headers: { "content-type": "application/json" }, cookies: [], body: Buffer.from(body) } };
  }
  const r = payload as { statusCode: unknown; headers?: unknown; cookies?: unknown; body?: unknown; isBase64Encoded?: unknown };
  const malformed = (why: string) => ({ answer: INTERNAL_ERROR(), malformed: why });
  if (!Number.isInteger(r.statusCode) || (r.statusCode as number) < 100 || (r.statusCode as number) > 599) return malformed(`statusCode ${JSON.stringify(r.statusCode)} is not an HTTP status`);
  if (r.body !== undefined && r.body !== null && typeof r.body !== "string") return malformed("body is not a string");
  if (r.cookies !== undefined && !(Array.isArray(r.cookies) && r.cookies.every((c) => typeof c === "string"))) return malformed("cookies is not a list of strings");
  const headers: Record<string, string> = {};
  const headerCookies: string[] = [];
  for (const [k, v] of Object.entries((r.headers ?? {}) as Record<string, unknown>)) {
    const name = k.toLowerCase();
    // node:http frames the body itself; a stale length from the function would cut or hang it.
    if (name === "content-length" || name === "transfer-encoding") continue;
    if (name === "set-cookie") headerCookies.push(String(v));
    else headers[name] = String(v);
  }
  const body = typeof r.body === "string" ? Buffer.from(r.body, r.isBase64Encoded === true ? "base64" : "utf8") : Buffer.alloc(0);
  // The `cookies` entries first, then a Set-Cookie of `headers`, as AWS was seen to send both.
  return { answer: { statusCode: r.statusCode as number, headers, cookies: [...((r.cookies as string[] | undefined) ?? []), ...headerCookies], body } };
}

/** Writes an answer with the request's `apigw-requestid`, as API Gateway puts on every answer. */
export function writeAnswer(res: ServerResponse, answer: HttpAnswer, requestId: string): void {
  res.writeHead(answer.statusCode, {
    ...answer.headers,
    "apigw-requestid": requestId,
    ...(answer.cookies.length ? { "set-cookie": answer.cookies } : {}),
  });
  // node:http sends no body to a HEAD.
  res.end(answer.body);
}
