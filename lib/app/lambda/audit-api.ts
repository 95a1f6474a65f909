/**
 * The audit API as a Lambda handler (API Gateway HTTP API, payload 2.0, IAM authorization set in the
 * stack). lib/audit parses, plans and reads; this maps requests and answers.
 *
 *   GET /events?service=<uuid>&since=7d&limit=50[&cursor=…]  → 200 { events: [...], next_cursor? }
 *   GET /explain/{id}                                          → 200 { id, subject?, alerts: [...] } or 404
 *
 * A bad filter (unknown name, bad uuid, bad date…) is a 400 with a message that names it; bad input
 * never becomes a 500. Only our own failures (the table unreachable) are 500s, logged.
 */
import middy from "@middy/core";
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from "aws-lambda";
import { AuditQueryError } from "../../audit/model.js";
import { parseAuditQuery } from "../../audit/parse.js";
import type { AuditReader } from "../../audit/dynamo.js";
import { resolveDeps, serviceName, type Deps } from "./telemetry.js";

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

/** `GET /events` or `GET /explain/{id}`, from the route key or, failing that, the raw path. */
export function routeOf(event: APIGatewayProxyEventV2): { route: "events" } | { route: "explain"; id: string } | undefined {
  if (event.requestContext?.http?.method && event.requestContext.http.method !== "GET") return undefined;
  const path = event.rawPath ?? "";
  if (/^(\/[^/]+)?\/events\/?$/.test(path) || event.routeKey === "GET /events") return { route: "events" };
  const id = event.pathParameters?.id ?? /\/explain\/([^/]+)\/?$/.exec(path)?.[1];
  if (id !== undefined) return { route: "explain", id: safeDecode(id) };
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** A Logger only: the API counts nothing of its own (API Gateway and Lambda measure its requests). */
export function createAuditApiHandler(deps: Deps<AuditApiDeps>, logger = new Logger({ serviceName: serviceName("audit-api") })): AuditApiHandler {
  const base = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const route = routeOf(event);
    if (!route) return json(404, { error: "no such route: use GET /events?… or GET /explain/{id}" });
    try {
      const d = await resolveDeps(deps);
      if (route.route === "events") {
        const query = parseAuditQuery(event.queryStringParameters ?? {}, d.now?.() ?? new Date());
        const page = await d.reader.query(query);
        return json(200, { events: page.rows, count: page.rows.length, ...(page.cursor ? { next_cursor: page.cursor } : {}) });
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
