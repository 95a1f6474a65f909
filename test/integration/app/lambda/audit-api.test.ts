/**
 * The audit API handler with a recording reader: routes, 400 for every bad filter (never a 500 for
 * bad input), 404 for an unknown id or route, 500 only when the store fails.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { APIGatewayProxyEventV2, Context } from "aws-lambda";
import { createAuditApiHandler } from "../../../../lib/app/lambda/audit-api.js";
import type { AuditReader } from "../../../../lib/audit/trail.js";
import type { AuditQuery } from "../../../../lib/audit/model.js";
import { AuditTrail } from "../../../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../../../lib/store/audit-store.js";
import { encodeCursor } from "../../../../lib/audit/cursor.js";
import { parseAuditQuery } from "../../../../lib/audit/parse.js";
import { csvHeader } from "../../../../lib/audit/output-formats.js";
import { freshTable } from "../../../support/dynamodb.js";

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

describe("GET /events against DynamoDB Local: 200 or 400 for any query string", () => {
  /** Hostile text: any code points, long runs, and the shapes each parameter almost accepts. */
  const anyText = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 400 }), fc.constantFrom("", " ", "\u0000", "x".repeat(5000)));
  const duration = fc.oneof(
    fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.constantFrom("ms", "s", "m", "h", "d")).map(([n, u]) => `${n}${u}`),
    fc.constantFrom("999999999999d", "3650d", "3651d", "0s", "1h30m", "-1d", "7 d", `${"9".repeat(400)}d`),
  );
  const instant = fc.oneof(
    fc.date({ noInvalidDate: false }).map((d) => (Number.isNaN(d.getTime()) ? "Invalid Date" : d.toISOString())),
    fc.constantFrom("0000-01-01", "9999-12-31T23:59:59-14:00", "+275760-09-13T00:00:00Z", "2026-02-31", "2026-13-01", "2026-03-01T25:00:00Z", "2026-03-01T08:00:00"),
  );
  const limit = fc.oneof(fc.integer({ min: -10, max: 2000 }).map(String), fc.constantFrom("1e3", "0x10", " 5 ", "50.5", "9".repeat(400), "Infinity"));
  const id = fc.oneof(fc.uuid().map(String), anyText);
  const commit = fc.oneof(fc.stringMatching(/^[0-9a-f]{1,80}$/), anyText);
  const VALUES: Record<string, fc.Arbitrary<string>> = {
    since: duration, from: instant, to: instant, limit,
    organization: id, project: id, environment: id, service: id, cluster: id, webhook: id, commit,
    kind: fc.oneof(fc.constantFrom("deployment", "webhook_delivery", "cluster_log", "health"), anyText),
    transition: fc.oneof(fc.constantFrom("failed", "recovered", "delivery_failed", "quarantined"), anyText),
    severity: fc.oneof(fc.constantFrom("critical", "error", "warning", "info"), anyText),
    type: fc.oneof(fc.constantFrom("execution", "record", "alert"), anyText),
    status: anyText, actor: anyText, cursor: anyText,
  };
  const query = fc
    .tuple(
      fc.uniqueArray(fc.constantFrom(...Object.keys(VALUES)), { maxLength: 5 }).chain((names) => fc.tuple(...names.map((n) => VALUES[n]!.map((v) => [n, v] as const)))),
      fc.option(fc.dictionary(anyText, anyText, { maxKeys: 2 }), { freq: 4 }),
    )
    .map(([known, unknown]) => ({ ...unknown, ...Object.fromEntries(known) }));
  /** A cursor of the right form for the query, with hostile contents: what a caller can forge. */
  const position = fc.record({ ix_at: fc.oneof(instant, anyText), pk: anyText, sk: anyText });
  const range = fc.record({ from: fc.oneof(instant, anyText), to: fc.oneof(instant, anyText) }, { requiredKeys: [] });

  it("never answers 500: huge durations, bad dates and limits, unknown keys, forged cursors", async () => {
    const { client, tableName } = await freshTable("audit-api-prop");
    const handler = createAuditApiHandler({ reader: new AuditTrail(new DynamoAuditItems({ client, tableName })), now });
    await fc.assert(
      fc.asyncProperty(query, fc.option(fc.tuple(position, range)), async (q, forged) => {
        const params: Record<string, string> = { ...q };
        if (forged) {
          const { cursor: _, ...rest } = params;
          try {
            params.cursor = encodeCursor(parseAuditQuery(rest, now()).identity, forged[0], forged[1]);
          } catch {
            // The query itself is bad: it is a 400 whatever the cursor.
          }
        }
        const res = await handler(event("/events", params), context);
        expect([200, 400], `${JSON.stringify(params).slice(0, 500)} → ${res.body?.slice(0, 300)}`).toContain(res.statusCode);
      }),
      {
        numRuns: 300,
        // Found by this property: a forged position in the year 9999 at -14:00 is past 9999 in UTC; an
        // upper bound widened past it was written `+010000-…`, which sorts before 1970 (a 500).
        examples: [[{}, [{ ix_at: "9999-12-31T23:59:59-14:00", pk: "", sk: "" }, { from: "1970-01-01T00:00:00.000Z" }]]],
      },
    );
    client.destroy();
  }, 120_000);

  it("answers 400 to since beyond the longest retention, naming the limit", async () => {
    const handler = createAuditApiHandler({ reader: reader().r, now });
    const res = await handler(event("/events", { since: "999999999999d" }), context);
    expect(res.statusCode).toBe(400);
    expect(body(res)).toEqual({ error: 'since: "999999999999d" must be from 1ms to 3650d', field: "since" });
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

describe("GET /events?format=csv", () => {
  it("answers the CLI's CSV with the next page's cursor in a header; another format is a 400", async () => {
    const rows = [{ type: "alert", id: "a1", kind: "deployment", at: "2026-03-01T00:00:00.000Z", observed_at: "2026-03-01T00:00:01.000Z", organization: "o", actor: "=1+1", summary: "s, t" }];
    const { r } = reader({ async query() { return { rows: rows as never, cursor: "next-page", plan: { index: "audit-what", partitions: [] } }; } });
    const handler = createAuditApiHandler({ reader: r, now });
    const res = await handler(event("/events", { format: "csv", type: "alert" }), context);
    expect(res.statusCode).toBe(200);
    expect(res.headers?.["content-type"]).toMatch(/^text\/csv/);
    expect(res.headers?.["x-next-cursor"]).toBe("next-page");
    expect(res.body).toBe(`${csvHeader()}2026-03-01T00:00:00.000Z,alert,deployment,a1,,,,o,,,,,,'=1+1,,,,,"s, t"\r\n`);
    const bad = await handler(event("/events", { format: "xml" }), context);
    expect(bad.statusCode).toBe(400);
    expect(body(bad)).toEqual({ error: 'format: "xml" is not one of json, csv', field: "format" });
  });
});

describe("GET /report", () => {
  const once = () => reader({ async query() { return { rows: [], plan: { index: "audit-what", partitions: [] } }; } });

  it("reads executions and the deployment alerts of the period through the audit queries, and answers the report", async () => {
    const queries: AuditQuery[] = [];
    const { r } = reader({ async query(q) { queries.push(q); return { rows: [], plan: { index: "audit-what", partitions: [] } }; } });
    const handler = createAuditApiHandler({ reader: r, now });
    const res = await handler(event("/report", { service: "3F2E1D0C-9B8A-4765-8432-10FEDCBA9876", since: "7d" }), context);
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ period: { from: "2026-03-03T12:00:00.000Z", to: "2026-03-10T12:00:00.000Z", days: 7 }, services: [] });
    const service = "3f2e1d0c-9b8a-4765-8432-10fedcba9876";
    // Alerts are read a day past the period (a failure's alert can come late), in slices of a week at most.
    expect([...new Set(queries.map((q) => JSON.stringify(q.filters)))].map((f) => JSON.parse(f)).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual([
      { service, transition: "failed", type: "alert" }, { service, transition: "recovered", type: "alert" },
      { service, transition: "still_failing", type: "alert" }, { service, type: "execution" },
    ]);
    expect(queries.find((q) => q.filters.type === "execution")!.range).toEqual({ from: "2026-03-03T12:00:00.000Z", to: "2026-03-10T12:00:00.000Z" });
    expect(queries.filter((q) => q.filters.transition === "failed").map((q) => q.range)).toEqual([
      { from: "2026-03-03T12:00:00.000Z", to: "2026-03-10T12:00:00.000Z" }, { from: "2026-03-10T12:00:00.000Z", to: "2026-03-11T12:00:00.000Z" },
    ]);
    expect((await handler(event("/prod/report", { format: "csv" }), context)).headers?.["content-type"]).toBe("text/csv; charset=utf-8");
  });

  it("answers 400 naming the bad parameter, never 500, whatever the parameters", async () => {
    const handler = createAuditApiHandler({ reader: once().r, now });
    for (const [query, field] of [[{ servce: "x" }, "servce"], [{ environment: "prod" }, "environment"], [{ since: "7d", to: "2026-03-01" }, "since"], [{ format: "table" }, "format"]] as const) {
      const res = await handler(event("/report", query), context);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(body(res).field).toBe(field);
    }
    const names = fc.constantFrom("service", "environment", "from", "to", "since", "format", "type", "x", "__proto__");
    await fc.assert(fc.asyncProperty(fc.dictionary(names, fc.string({ maxLength: 40 })), async (query) => {
      expect([200, 400]).toContain((await handler(event("/report", query), context)).statusCode);
    }), { numRuns: 200 });
  });
});

describe("the audit web page (web/audit/)", () => {
  it("serves its files (uPlot's too), with a policy that runs only its own script, from / or under a stage", async () => {
    const handler = createAuditApiHandler({ reader: reader().r, now });
    const page = await handler(event("/"), context);
    expect(page.statusCode).toBe(200);
    expect(page.headers?.["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers?.["content-security-policy"]).toMatch(/script-src 'self';/);
    expect(page.body).toContain('<script type="module" src="audit.js"></script>');
    expect((await handler(event("/prod/audit.js"), context)).headers?.["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await handler(event("/audit.css"), context)).headers?.["content-type"]).toBe("text/css; charset=utf-8");
    expect(page.body).toContain('<script src="uplot.js"></script>');
    expect((await handler(event("/uplot.js"), context)).headers?.["content-type"]).toBe("text/javascript; charset=utf-8");
    expect((await handler(event("/uplot.css"), context)).headers?.["content-type"]).toBe("text/css; charset=utf-8");
    for (const path of ["/constructor", "/package.json", "/../lookout.yaml", "/audit.js/", "/web/audit/index.html"]) {
      expect((await handler(event(path), context)).statusCode, path).toBe(404);
    }
  });
});
