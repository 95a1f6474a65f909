/**
 * The audit API handler with a recording reader: routes, 400 for every bad filter (never a 500 for
 * bad input), 404 for an unknown id or route, 500 only when the store fails.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { createAuditApiHandler } from "../../functions/audit-api.js";
import type { AuditReader } from "../../lib/audit/dynamo.js";
import type { AuditQuery } from "../../lib/audit/model.js";

const context = { functionName: "audit-api", awsRequestId: "req-1", getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

function event(path: string, query?: Record<string, string>, method = "GET"): APIGatewayProxyEventV2 {
  const explain = /^\/explain\/(.+)$/.exec(path);
  return {
    version: "2.0",
    routeKey: explain ? "GET /explain/{id}" : `${method} ${path}`,
    rawPath: path,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: {},
    ...(query ? { queryStringParameters: query } : {}),
    ...(explain ? { pathParameters: { id: explain[1]! } } : {}),
    requestContext: { http: { method, path, protocol: "HTTP/1.1", sourceIp: "127.0.0.1", userAgent: "t" } } as APIGatewayProxyEventV2["requestContext"],
    isBase64Encoded: false,
  };
}

function reader(over: Partial<AuditReader> = {}) {
  const queries: AuditQuery[] = [];
  const r: AuditReader = {
    async query(q) {
      queries.push(q);
      return { rows: [], cursor: "next-page", plan: { index: "audit-what", partitions: [] } };
    },
    async explain(id) {
      return id === "known" ? { id, alerts: [] } : undefined;
    },
    ...over,
  };
  return { r, queries };
}

const now = () => new Date("2026-03-10T12:00:00Z");
const body = (res: { body?: string }) => JSON.parse(res.body ?? "null");

describe("GET /events", () => {
  it("passes the filters as query parameters and answers JSON with the next cursor", async () => {
    const { r, queries } = reader();
    const handler = createAuditApiHandler({ reader: r, now });
    const res = await handler(event("/events", { service: "3F2E1D0C-9B8A-4765-8432-10FEDCBA9876", since: "7d", limit: "5" }), context);
    expect(res.statusCode).toBe(200);
    expect(res.headers?.["content-type"]).toMatch(/^application\/json/);
    expect(body(res)).toEqual({ events: [], count: 0, next_cursor: "next-page" });
    expect(queries[0]).toMatchObject({ filters: { service: "3f2e1d0c-9b8a-4765-8432-10fedcba9876" }, limit: 5, range: { from: "2026-03-03T12:00:00.000Z" } });
  });

  it("answers 400 naming the bad filter: unknown field, bad date, bad uuid, bad cursor", async () => {
    const handler = createAuditApiHandler({ reader: reader().r, now });
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ servce: "x" }, /^servce: unknown filter/],
      [{ from: "last tuesday" }, /^from: "last tuesday" is not an ISO 8601 date/],
      [{ service: "api" }, /^service: "api" is not a uuid/],
      [{ cursor: "???" }, /^cursor: is not a cursor/],
      [{ kind: "deployment", severity: "loud" }, /^severity:/],
    ];
    for (const [query, message] of cases) {
      const res = await handler(event("/events", query), context);
      expect(res.statusCode).toBe(400);
      expect(body(res).error).toMatch(message);
    }
  });

  it("never answers 500 to bad input, whatever the parameters", async () => {
    const handler = createAuditApiHandler({ reader: reader().r, now });
    const names = fc.constantFrom("service", "from", "to", "since", "limit", "cursor", "kind", "status", "commit", "actor", "x", "__proto__", "constructor");
    await fc.assert(fc.asyncProperty(fc.dictionary(names, fc.string({ maxLength: 40 })), async (query) => {
      const res = await handler(event("/events", query), context);
      expect([200, 400]).toContain(res.statusCode);
    }), { numRuns: 200 });
  });
});

describe("GET /explain/{id}", () => {
  it("answers the explanation, 404 for an unknown id, 404 for an unknown route", async () => {
    const handler = createAuditApiHandler({ reader: reader().r, now });
    expect(body(await handler(event("/explain/known"), context))).toEqual({ id: "known", alerts: [] });
    const missing = await handler(event("/explain/nope"), context);
    expect(missing.statusCode).toBe(404);
    expect(body(missing).error).toMatch(/no record, alert or execution nope/);
    expect((await handler(event("/nowhere"), context)).statusCode).toBe(404);
    expect((await handler(event("/events", {}, "POST"), context)).statusCode).toBe(404);
  });

  it("answers 500, without the cause, only when the store fails", async () => {
    const handler = createAuditApiHandler({ reader: reader({ explain: async () => { throw new Error("ECONNREFUSED 10.0.0.1"); } }).r, now });
    const res = await handler(event("/explain/known"), context);
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain("ECONNREFUSED");
  });
});
