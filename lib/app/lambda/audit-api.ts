/**
 * The audit API as a Lambda handler (API Gateway HTTP API, payload 2.0, IAM authorization set in the
 * stack). lib/audit parses, plans and reads; this maps requests and answers.
 *
 *   GET /events?service=<uuid>&since=7d&limit=50[&cursor=…]  → 200 { events: [...], next_cursor? }
 *   GET /explain/{id}                                          → 200 { id, subject?, alerts: [...] } or 404
 *   GET /events?…&format=csv                                   → 200 text/csv (the CLI's columns), next cursor in x-next-cursor
 *   GET /report?since=30d&service=<uuid>&environment=<uuid>    → 200 the delivery report (docs/report.md); format=csv as `lookout report`
 *   GET /, /audit.js, /audit.css, /uplot.js, /uplot.css        → the audit web page (web/audit/), which reads the routes above
 *
 * A bad filter (unknown name, bad uuid, bad date…) is a 400 with a message that names it; bad input
 * never becomes a 500. Only our own failures (the table unreachable) are 500s, logged.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import middy from "@middy/core";
import type { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { AuditQueryError } from "../../audit/model.js";
import { parseAuditQuery } from "../../audit/parse.js";
import { csvHeader, csvRow } from "../../audit/output-formats.js";
import { parseReportQuery, readReportInput } from "../../audit/delivery-report-read.js";
import { deliveryReport } from "../../audit/delivery-report.js";
import { reportCsv } from "../../audit/delivery-report-format.js";
import type { AuditReader } from "../../audit/trail.js";
import { loggerOr, resolveDeps, type Deps } from "./telemetry.js";

export interface AuditApiDeps {
  reader: AuditReader;
  now?: () => Date;
}

export type AuditApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

const json = (statusCode: number, body: unknown): APIGatewayProxyStructuredResultV2 => ({
  statusCode,
  headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" },
  body: JSON.stringify(body),
});

/** The page's files by the name they are asked for: a fixed list, so no request path ever reaches the file system. */
export const WEB_FILES: Readonly<Record<string, { file: string; type: string }>> = {
  "": { file: "index.html", type: "text/html; charset=utf-8" },
  "index.html": { file: "index.html", type: "text/html; charset=utf-8" },
  "audit.js": { file: "audit.js", type: "text/javascript; charset=utf-8" },
  "audit.css": { file: "audit.css", type: "text/css; charset=utf-8" },
  // uPlot (npm `uplot`, MIT; web/audit/uplot.LICENSE), its files as the package ships them: the report's charts.
  "uplot.js": { file: "uplot.js", type: "text/javascript; charset=utf-8" },
  "uplot.css": { file: "uplot.css", type: "text/css; charset=utf-8" },
};

/**
 * Where the page's files are: beside the handler in the Lambda package (serverless.yml packages web/audit/
 * with the function), or in the clone when run locally (`lookout audit --serve`).
 */
export function defaultWebRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.LAMBDA_TASK_ROOT ? join(env.LAMBDA_TASK_ROOT, "web", "audit") : fileURLToPath(new URL("../../../web/audit/", import.meta.url));
}

/**
 * The page may load only its own files and call only its own origin; platform text in it is never markup.
 * `data:` images: its empty icon (`data:,`), so the browser does not ask for a /favicon.ico not served.
 */
const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

type Route = { route: "events" } | { route: "report" } | { route: "explain"; id: string } | { route: "web"; name: string };

/** `GET /events`, `GET /report`, `GET /explain/{id}` or a file of the page, from the route key or, failing that, the raw path. */
export function routeOf(event: APIGatewayProxyEventV2): Route | undefined {
  if (event.requestContext?.http?.method && event.requestContext.http.method !== "GET") return undefined;
  const path = event.rawPath ?? "";
  if (/^(\/[^/]+)?\/events\/?$/.test(path) || event.routeKey === "GET /events") return { route: "events" };
  if (/^(\/[^/]+)?\/report\/?$/.test(path) || event.routeKey === "GET /report") return { route: "report" };
  const id = event.pathParameters?.id ?? /\/explain\/([^/]+)\/?$/.exec(path)?.[1];
  if (id !== undefined) return { route: "explain", id: safeDecode(id) };
  // An optional stage prefix (/prod/audit.js), as for /events.
  const file = /^(?:\/[^/.]+)?\/([a-z.]*)$/.exec(path)?.[1];
  if (file !== undefined && Object.hasOwn(WEB_FILES, file)) return { route: "web", name: file };
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `format` picks the answer's shape; every other parameter is the query's. */
function formatOf(params: Record<string, string | undefined>): { format: "json" | "csv"; rest: Record<string, string | undefined> } {
  const { format, ...rest } = params;
  if (format === undefined || format === "json" || format === "csv") return { format: format ?? "json", rest };
  throw new AuditQueryError("format", `"${format}" is not one of json, csv`);
}

/** The delivery report as CSV (as `lookout report --format csv`). */
const reportCsvAnswer = (lines: string[]): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: { "content-type": "text/csv; charset=utf-8", "content-disposition": 'attachment; filename="lookout-report.csv"', "cache-control": "no-store" },
  body: lines.join(""),
});

/** One page as CSV (as `lookout audit --format csv`); the next page's cursor in a header, so the body stays rows. */
const csv = (rows: Parameters<typeof csvRow>[0][], cursor: string | undefined): APIGatewayProxyStructuredResultV2 => ({
  statusCode: 200,
  headers: {
    "content-type": "text/csv; charset=utf-8",
    "content-disposition": 'attachment; filename="lookout-audit.csv"',
    "cache-control": "no-store",
    ...(cursor ? { "x-next-cursor": cursor, "access-control-expose-headers": "x-next-cursor" } : {}),
  },
  body: csvHeader() + rows.map(csvRow).join(""),
});

/**
 * A Logger only: the API counts nothing of its own (API Gateway and Lambda measure its requests).
 * `webRoot`: the folder of the page's files (web/audit/).
 */
export function createAuditApiHandler(
  deps: Deps<AuditApiDeps>,
  logger: Logger = loggerOr("audit-api"),
  webRoot = defaultWebRoot(),
): AuditApiHandler {
  const page = async (name: string): Promise<APIGatewayProxyStructuredResultV2> => {
    const f = WEB_FILES[name]!;
    return { statusCode: 200, headers: { "content-type": f.type, ...PAGE_HEADERS }, body: await readFile(join(webRoot, f.file), "utf8") };
  };
  const base = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const route = routeOf(event);
    if (!route) return json(404, { error: "no such route: use GET /events?…, GET /report?… or GET /explain/{id}" });
    try {
      // The page needs no store.
      if (route.route === "web") return await page(route.name);
      const d = await resolveDeps(deps);
      if (route.route === "events") {
        const { format, rest } = formatOf(event.queryStringParameters ?? {});
        const query = parseAuditQuery(rest, d.now?.() ?? new Date());
        const page = await d.reader.query(query);
        if (format === "csv") return csv(page.rows, page.cursor);
        return json(200, { events: page.rows, count: page.rows.length, ...(page.cursor ? { next_cursor: page.cursor } : {}) });
      }
      if (route.route === "report") {
        const { format, rest } = formatOf(event.queryStringParameters ?? {});
        const now = d.now?.() ?? new Date();
        const query = parseReportQuery(rest, now);
        const report = deliveryReport(await readReportInput(d.reader, query, now), query.period);
        return format === "csv" ? reportCsvAnswer(reportCsv(report)) : json(200, report);
      }
      if (!route.id.trim() || route.id.length > 512) return json(400, { error: "id: give the id of a record, execution or alert" });
      const explanation = await d.reader.explain(route.id);
      return explanation ? json(200, explanation) : json(404, { error: `no record, alert or execution ${route.id}` });
    } catch (err) {
      if (err instanceof AuditQueryError) return json(400, { error: err.message, field: err.field });
      logger.error("audit request failed", { error: (err as Error).message, route: route.route });
      return json(500, { error: "the audit trail could not be read; try again" });
    }
  };
  return middy(base).use(injectLambdaContext(logger)) as unknown as AuditApiHandler;
}
