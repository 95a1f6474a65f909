/**
 * The HTTP API of `lookout cloud-local` (docs/cloud-local.md, "The HTTP API"): API Gateway's route
 * selection, the payload 2.0 event, its reading of the function's answer and its own answers (404, 500,
 * 503), in front of a scripted function; and the routes read from the packaged template, served in
 * front of the audit API's handler itself.
 */
import { request } from "node:http";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HttpApi, type HttpRoute, routesFromTemplate, startHttpApi } from "../../../local/cloud-local/http-api.js";
import type { Invocation } from "../../../local/cloud-local/call-function.js";
import { readPackagedTemplate, type Template, TemplateError } from "../../../local/cloud-local/template.js";
import { createAuditApiHandler } from "../../../lib/app/lambda/audit-api.js";
import type { AuditReader } from "../../../lib/audit/trail.js";
import { examplePackage } from "../../support/packaged-example.js";

type Event = APIGatewayProxyEventV2 & { requestContext: { authorizer?: { iam: Record<string, unknown> } } };
interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request, with repeated headers as given (`fetch` would neither repeat them nor send another Host). */
function send(api: HttpApi, path: string, opts: { method?: string; headers?: Record<string, string | string[]>; body?: Buffer | string } = {}): Promise<Reply> {
  const { port } = new URL(api.url);
  return new Promise((done, fail) => {
    const req = request({ host: "127.0.0.1", port, path, method: opts.method ?? "GET", headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", fail);
    req.end(opts.body);
  });
}

const ok = (payload: unknown): Invocation => ({ ok: true, payload, ms: 1 });
const route = (routeKey: string, functionName: string, more: Partial<HttpRoute> = {}): HttpRoute => ({ routeKey, functionName, timeoutMs: 2_000, ...more });
const account = { apiId: "a1b2c3d4e5", accountId: "123456789012", region: "us-east-1" };

let api: HttpApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** The API in front of a function that answers `answer(event)` and records what it got. */
async function serve(routes: HttpRoute[], answer: (event: Event) => Invocation | Promise<Invocation> = () => ok({ statusCode: 200 })) {
  const calls: Array<{ name: string; event: Event }> = [];
  const lines: string[] = [];
  api = await startHttpApi({
    routes, ...account, activity: (l) => lines.push(l),
    invoke: async (name, event) => {
      calls.push({ name, event: event as Event });
      return answer(event as Event);
    },
  });
  return { api, calls, lines, last: () => calls.at(-1)! };
}

describe("the cloud-local HTTP API: routes", () => {
  const routes = [
    route("GET /explain/{id}", "explain"), route("GET /explain/latest", "latest"), route("ANY /explain/{id}", "any-explain"),
    route("GET /files/{proxy+}", "files"), route("ANY /{proxy+}", "catch-all"), route("$default", "fallback"),
  ];

  it("picks the most specific: a fixed path before {var}, {var} before {proxy+}, a method before ANY, $default last", async () => {
    const s = await serve(routes);
    const picked = async (method: string, path: string) => (await send(s.api, path, { method }), [s.last().name, s.last().event.routeKey, s.last().event.pathParameters]);
    expect(await picked("GET", "/explain/latest")).toEqual(["latest", "GET /explain/latest", undefined]);
    expect(await picked("GET", "/explain/r%20one")).toEqual(["explain", "GET /explain/{id}", { id: "r one" }]);
    expect(await picked("DELETE", "/explain/x")).toEqual(["any-explain", "ANY /explain/{id}", { id: "x" }]);
    expect(await picked("GET", "/files/a/b.txt")).toEqual(["files", "GET /files/{proxy+}", { proxy: "a/b.txt" }]);
    expect(await picked("POST", "/files/a")).toEqual(["catch-all", "ANY /{proxy+}", { proxy: "files/a" }]);
    // A greedy variable needs a segment: the root is no route's but $default's.
    expect(await picked("GET", "/")).toEqual(["fallback", "$default", undefined]);
    expect(s.last().event.rawPath).toBe("/");
  });

  it("answers 404 {message: Not Found} when no route matches and there is no $default", async () => {
    const s = await serve([route("GET /events", "events"), route("GET /explain/{id}", "explain"), route("GET /", "page")]);
    for (const [method, path] of [["GET", "/nowhere"], ["POST", "/events"], ["GET", "/explain/"], ["GET", "/events/"], ["GET", "/explain/a/b"], ["POST", "/"]] as const) {
      const r = await send(s.api, path, { method });
      expect([method, path, r.status, JSON.parse(r.body)]).toEqual([method, path, 404, { message: "Not Found" }]);
      expect(r.headers["apigw-requestid"]).toMatch(/^[A-Za-z0-9+/]{15}=$/);
    }
    expect(s.calls).toEqual([]);
    expect(s.lines.at(-1)).toMatch(/^HTTP API ← POST \/ 404: no route \(\d+ ms\)$/);
    await send(s.api, "/");
    expect(s.last().name).toBe("page");
  });

  it("refuses a route key it cannot read, naming it", async () => {
    await expect(startHttpApi({ routes: [route("GET /a/{proxy+}/b", "f")], invoke: async () => ok(1), ...account })).rejects.toThrow(/greedy path variable must end the path/);
    await expect(startHttpApi({ routes: [route("/events", "f")], invoke: async () => ok(1), ...account })).rejects.toThrow(/"\/events" is not "METHOD \/path"/);
  });
});

describe("the cloud-local HTTP API: the event (payload format 2.0)", () => {
  it("carries the request as API Gateway does: repeated names joined with commas, cookies apart, lower-case headers", async () => {
    const s = await serve([route("GET /events", "events")]);
    const r = await send(s.api, "/events?service=a&since=7d&service=b&empty=", {
      headers: { "X-Trace": ["one", "two"], Cookie: "session=abc; theme=dark", "User-Agent": "curl/8" },
    });
    expect(r.status).toBe(200);
    const e = s.last().event;
    expect(e.version).toBe("2.0");
    expect(e.routeKey).toBe("GET /events");
    expect(e.rawPath).toBe("/events");
    expect(e.rawQueryString).toBe("service=a&since=7d&service=b&empty=");
    expect(e.queryStringParameters).toEqual({ service: "a,b", since: "7d", empty: "" });
    expect(e.cookies).toEqual(["session=abc", "theme=dark"]);
    expect(e.headers["x-trace"]).toBe("one,two");
    expect(e.headers.cookie).toBeUndefined();
    expect(e.headers["user-agent"]).toBe("curl/8");
    expect(e.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(e.pathParameters).toBeUndefined();
    expect(e).not.toHaveProperty("stageVariables");
    expect(e).not.toHaveProperty("body");
    expect(e.isBase64Encoded).toBe(false);
    const c = e.requestContext;
    expect(c).toMatchObject({
      accountId: account.accountId, apiId: account.apiId, domainPrefix: account.apiId, routeKey: "GET /events", stage: "$default",
      http: { method: "GET", path: "/events", protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "curl/8" },
    });
    expect(c.domainName).toBe(new URL(s.api.url).host);
    expect(c.requestId).toBe(r.headers["apigw-requestid"]);
    expect(c.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(c.timeEpoch - Date.now())).toBeLessThan(5_000);
    expect(e.requestContext.authorizer).toBeUndefined();
  });

  it("names a local caller for an AWS_IAM route (no SigV4 is checked)", async () => {
    const s = await serve([route("GET /events", "events", { authorization: "AWS_IAM" })]);
    await send(s.api, "/events");
    expect(s.last().event.requestContext.authorizer?.iam).toMatchObject({ accountId: account.accountId, userArn: `arn:aws:iam::${account.accountId}:user/cloud-local` });
  });

  it("passes a text or JSON body as text and any other as base64", async () => {
    const s = await serve([route("POST /in", "in")]);
    await send(s.api, "/in", { method: "POST", headers: { "content-type": "application/json; charset=utf-8" }, body: '{"a":1}' });
    expect([s.last().event.body, s.last().event.isBase64Encoded]).toEqual(['{"a":1}', false]);
    await send(s.api, "/in", { method: "POST", headers: { "content-type": "text/csv" }, body: "a,b\n" });
    expect([s.last().event.body, s.last().event.isBase64Encoded]).toEqual(["a,b\n", false]);
    const bytes = Buffer.from([0, 255, 1, 2]);
    await send(s.api, "/in", { method: "POST", headers: { "content-type": "application/octet-stream" }, body: bytes });
    expect([s.last().event.body, s.last().event.isBase64Encoded]).toEqual([bytes.toString("base64"), true]);
    // A form, or no type at all, is base64 too, as API Gateway sends them.
    await send(s.api, "/in", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "a=1" });
    expect([s.last().event.body, s.last().event.isBase64Encoded]).toEqual([Buffer.from("a=1").toString("base64"), true]);
  });
});

describe("the cloud-local HTTP API: the answer", () => {
  it("takes statusCode, headers, cookies (a Set-Cookie each) and a base64 body from the function; not multiValueHeaders (format 1.0)", async () => {
    const s = await serve([route("GET /png", "png")], () => ok({
      statusCode: 201, headers: { "Content-Type": "image/png", "x-n": 3 }, multiValueHeaders: { "x-multi": ["a", "b"] },
      cookies: ["a=1; Path=/", "b=2"], body: Buffer.from([137, 80, 78, 71]).toString("base64"), isBase64Encoded: true,
    }));
    const { port } = new URL(s.api.url);
    const bytes = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((done) =>
      request({ host: "127.0.0.1", port, path: "/png" }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c)).on("end", () => done({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      }).end());
    expect(bytes.status).toBe(201);
    expect(bytes.body).toEqual(Buffer.from([137, 80, 78, 71]));
    expect(bytes.headers).toMatchObject({ "content-type": "image/png", "x-n": "3", "set-cookie": ["a=1; Path=/", "b=2"] });
    expect(bytes.headers["x-multi"]).toBeUndefined();
    expect(s.lines).toEqual([expect.stringMatching(/^png ← GET \/png 201 \(\d+ ms\)$/)]);
  });

  it("answers a payload without statusCode as a 200 of JSON (a string as it is)", async () => {
    let payload: unknown = { events: [], count: 0 };
    const s = await serve([route("GET /x", "x")], () => ok(payload));
    const json = await send(s.api, "/x");
    expect([json.status, json.headers["content-type"], JSON.parse(json.body)]).toEqual([200, "application/json", { events: [], count: 0 }]);
    payload = "Hello from Lambda!";
    const text = await send(s.api, "/x");
    expect([text.status, text.headers["content-type"], text.body]).toEqual([200, "application/json", "Hello from Lambda!"]);
  });

  it("answers a function error, or a response it cannot read, with 500 {message: Internal Server Error}", async () => {
    let outcome: Invocation = { ok: false, errorType: "Runtime.ExitError", errorMessage: "exited with 1", ms: 3 };
    const s = await serve([route("GET /x", "x")], () => outcome);
    const failed = await send(s.api, "/x");
    expect([failed.status, JSON.parse(failed.body)]).toEqual([500, { message: "Internal Server Error" }]);
    expect(failed.headers["apigw-requestid"]).toBeTruthy();
    expect(s.lines.at(-1)).toMatch(/^x ← GET \/x 500: Runtime.ExitError: exited with 1 \(\d+ ms\)$/);
    outcome = ok({ statusCode: "two hundred", body: "x" });
    expect((await send(s.api, "/x")).status).toBe(500);
    expect(s.lines.at(-1)).toMatch(/cannot read: statusCode "two hundred" is not an HTTP status/);
  });

  it("answers 503 {message: Service Unavailable} when the function outlasts the integration's timeout, without waiting for it", async () => {
    const s = await serve([route("GET /slow", "slow", { timeoutMs: 50 })], () => new Promise((done) => setTimeout(() => done(ok({ statusCode: 200 })), 2_000)));
    const started = Date.now();
    const r = await send(s.api, "/slow");
    expect([r.status, JSON.parse(r.body)]).toEqual([503, { message: "Service Unavailable" }]);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(s.lines.at(-1)).toMatch(/^slow ← GET \/slow 503: no answer within the integration's 50 ms/);
  });

  it("refuses a Host that is not this server, and listens on this machine only", async () => {
    const s = await serve([route("GET /events", "events")]);
    const { port } = new URL(s.api.url);
    const r = await send(s.api, "/events", { headers: { host: `attacker.example:${port}` } });
    expect(r.status).toBe(403);
    expect(s.calls).toEqual([]);
    expect((await send(s.api, "/events", { headers: { host: `localhost:${port}` } })).status).toBe(200);
    await expect(startHttpApi({ routes: [], invoke: async () => ok(1), ...account, host: "0.0.0.0" })).rejects.toThrow(/this machine only/);
  });
});

describe("routes from the template", () => {
  const byFunctionName = (resources: Template["Resources"]) => (value: unknown) => {
    const getAtt = (value as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"];
    return String(resources[getAtt[0]]!.Properties!.FunctionName);
  };
  const small = (): Template["Resources"] => ({
    Api: { Type: "AWS::ApiGatewayV2::Api", Properties: { ProtocolType: "HTTP" } },
    Stage: { Type: "AWS::ApiGatewayV2::Stage", Properties: { ApiId: { Ref: "Api" }, StageName: "$default" } },
    Fn: { Type: "AWS::Lambda::Function", Properties: { FunctionName: "fn" } },
    Grant: { Type: "AWS::Lambda::Permission", Properties: { FunctionName: { "Fn::GetAtt": ["Fn", "Arn"] }, Action: "lambda:InvokeFunction", Principal: "apigateway.amazonaws.com" } },
    Integration: { Type: "AWS::ApiGatewayV2::Integration", Properties: { ApiId: { Ref: "Api" }, IntegrationType: "AWS_PROXY", IntegrationUri: { "Fn::GetAtt": ["Fn", "Arn"] }, PayloadFormatVersion: "2.0" } },
    Route: { Type: "AWS::ApiGatewayV2::Route", Properties: { ApiId: { Ref: "Api" }, RouteKey: "GET /x", Target: { "Fn::Join": ["/", ["integrations", { Ref: "Integration" }]] } } },
  });
  const routesOf = (r: Template["Resources"]) => routesFromTemplate(r, byFunctionName(r));

  it("fails naming the template path of what API Gateway could not serve as written", () => {
    expect(routesOf(small())).toEqual([{ routeKey: "GET /x", functionName: "fn", timeoutMs: 30_000, authorization: "NONE" }]);
    const broken = (change: (r: Template["Resources"]) => void) => {
      const r = small();
      change(r);
      return () => routesOf(r);
    };
    expect(broken((r) => delete r.Integration)).toThrow(new TemplateError("Resources.Route.Properties.Target", "integrations/Integration: no AWS::ApiGatewayV2::Integration of that name in the template"));
    expect(broken((r) => delete r.Route!.Properties!.Target)).toThrow(/^Resources\.Route\.Properties\.Target: the route has no integration$/);
    expect(broken((r) => (r.Integration!.Properties!.IntegrationType = "HTTP_PROXY"))).toThrow(/^Resources\.Integration\.Properties\.IntegrationType: HTTP_PROXY: cloud-local serves AWS_PROXY/);
    expect(broken((r) => (r.Integration!.Properties!.PayloadFormatVersion = "1.0"))).toThrow(/^Resources\.Integration\.Properties\.PayloadFormatVersion: 1\.0: cloud-local serves payload format 2\.0 only$/);
    expect(broken((r) => (r.Route!.Properties!.AuthorizationType = "JWT"))).toThrow(/^Resources\.Route\.Properties\.AuthorizationType: JWT authorizers are not emulated/);
    expect(broken((r) => (r.Stage!.Properties!.StageName = "prod"))).toThrow(/^Resources\.Stage\.Properties\.StageName: stage "prod"/);
    expect(broken((r) => delete r.Grant)).toThrow(/^Resources\.Integration\.Properties\.IntegrationUri: fn grants apigateway\.amazonaws\.com no lambda:InvokeFunction/);
    expect(broken((r) => (r.Route!.Properties!.RouteKey = "GET events"))).toThrow(/^Resources\.Route\.Properties\.RouteKey: route key "GET events"/);
  });

  describe("of the packaged stack", () => {
    let template: Template;
    beforeAll(async () => {
      template = readPackagedTemplate((await examplePackage()).template);
    }, 240_000);

    it("are the audit API's eight, IAM-authorized, and Slack's open one, with the integration's 30 s timeout, and serve their handlers", async () => {
      const all = routesFromTemplate(template.Resources, byFunctionName(template.Resources));
      expect(all.map((r) => r.routeKey).sort()).toEqual(["GET /", "GET /audit.css", "GET /audit.js", "GET /events", "GET /explain/{id}", "GET /report", "GET /uplot.css", "GET /uplot.js", "POST /slack/actions"]);
      expect(new Set(all.map((r) => `${r.functionName} ${r.authorization} ${r.timeoutMs}`))).toEqual(new Set(["lookout-prod-audit-api AWS_IAM 30000", "lookout-prod-slack-actions NONE 30000"]));
      const routes = all.filter((r) => r.functionName === "lookout-prod-audit-api");

      // The handler itself behind the routes: the event's route key and path parameter reach it as in the cloud.
      const explained: string[] = [];
      const reader: AuditReader = {
        query: async () => ({ rows: [], plan: { index: "audit-what", partitions: [] } }),
        explain: async (id) => (explained.push(id), undefined),
      };
      const handler = createAuditApiHandler({ reader });
      const context = { functionName: "lookout-prod-audit-api", awsRequestId: "r", getRemainingTimeInMillis: () => 30_000 } as unknown as Context;
      api = await startHttpApi({ routes, ...account, invoke: async (_name, event) => ok(await handler(event as APIGatewayProxyEventV2, context)) });
      const events = await send(api, "/events?limit=5");
      expect([events.status, JSON.parse(events.body)]).toEqual([200, { events: [], count: 0 }]);
      const explain = await send(api, "/explain/exec%3A42");
      expect([explain.status, JSON.parse(explain.body).error]).toEqual([404, "no record, alert or execution exec:42"]);
      expect(explained).toEqual(["exec:42"]);
      expect((await send(api, "/audit.js")).headers["content-type"]).toBe("text/javascript; charset=utf-8");
      expect((await send(api, "/")).headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(JSON.parse((await send(api, "/index.html")).body)).toEqual({ message: "Not Found" });
    });
  });
});
