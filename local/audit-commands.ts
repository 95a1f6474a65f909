/**
 * `lookout audit` and `lookout explain`: the audit trail from the local store (`data_dir`, or
 * DYNAMODB_ENDPOINT) or, with `--table`, from the deployed table (AWS credentials from the environment).
 * Output goes through `out` (rows, tables) and `err` (the next-page cursor for scripts, problems), so
 * tests capture both.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfigFile } from "../lib/config/load.js";
import { AuditQueryError, FILTERS, type FilterName } from "../lib/audit/model.js";
import { parseAuditQuery, type RawQuery } from "../lib/audit/parse.js";
import { DynamoAuditStore, type AuditReader } from "../lib/audit/dynamo.js";
import { FORMATS, type Format, csvHeader, csvRow, explanationLines, jsonLine, tableLines } from "../lib/audit/format.js";
import { openLocalStore } from "./pipeline.js";
import { reportFailure } from "./commands.js";
import type { StoreTarget } from "./mute-commands.js";
import { startAuditServer } from "./audit-server.js";

export interface AuditIO {
  out: (line: string) => void;
  err: (line: string) => void;
}

const stdio: AuditIO = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

export type AuditArgs = StoreTarget & Partial<Record<FilterName | "since" | "from" | "to" | "limit" | "cursor", string>> & { format?: string };

async function withAuditReader<T>(target: StoreTarget, fn: (reader: AuditReader) => Promise<T>): Promise<T> {
  if (target.table) {
    const client = new DynamoDBClient({});
    try {
      return await fn(new DynamoAuditStore({ client, tableName: target.table }));
    } finally {
      client.destroy();
    }
  }
  const config = loadConfigFile(target.config);
  const local = await openLocalStore(config);
  try {
    return await fn(new DynamoAuditStore({ client: local.dynamodb, tableName: local.tableName }));
  } finally {
    await local.close();
  }
}

function parseFormat(format: string | undefined, allowed: readonly string[], fallback: string): string {
  const f = format ?? fallback;
  if (!allowed.includes(f)) throw new AuditQueryError("format", `"${f}" is not one of ${allowed.join(", ")}`);
  return f;
}

/** The query the flags ask for; the store is not opened when they are wrong. */
export function auditQueryOf(args: AuditArgs, now: Date) {
  const raw: RawQuery = {};
  for (const name of [...FILTERS, "since", "from", "to", "limit", "cursor"] as const) raw[name] = args[name];
  return parseAuditQuery(raw, now);
}

export async function auditCommand(args: AuditArgs, io: AuditIO = stdio, reader?: AuditReader): Promise<number> {
  try {
    const format = parseFormat(args.format, FORMATS, "table") as Format;
    const query = auditQueryOf(args, new Date());
    const page = reader ? await reader.query(query) : await withAuditReader(args, (r) => r.query(query));
    if (format === "json") {
      for (const row of page.rows) io.out(jsonLine(row));
      if (page.cursor) io.err(`next page: --cursor ${page.cursor}`);
    } else if (format === "csv") {
      // RFC 4180 lines end in CRLF; `out` adds the LF.
      io.out(csvHeader().slice(0, -1));
      for (const row of page.rows) io.out(csvRow(row).slice(0, -1));
      if (page.cursor) io.err(`next page: --cursor ${page.cursor}`);
    } else {
      if (!page.rows.length) io.out("nothing matches");
      else for (const line of tableLines(page.rows)) io.out(line);
      io.out(page.cursor ? `${page.rows.length} rows; next page: --cursor ${page.cursor}` : `${page.rows.length} row${page.rows.length === 1 ? "" : "s"}`);
    }
    return 0;
  } catch (err) {
    return failure("audit", err, io);
  }
}

export async function explainCommand(id: string, args: StoreTarget & { format?: string }, io: AuditIO = stdio, reader?: AuditReader): Promise<number> {
  try {
    const format = parseFormat(args.format, ["text", "json"], "text");
    const explanation = reader ? await reader.explain(id) : await withAuditReader(args, (r) => r.explain(id));
    if (!explanation) {
      io.err(`lookout explain: no record, alert or execution ${id} (take the ID column of lookout audit; executions are <service id>:<execution id>)`);
      return 1;
    }
    if (format === "json") io.out(JSON.stringify(explanation, null, 2));
    else for (const line of explanationLines(explanation)) io.out(line);
    return 0;
  } catch (err) {
    return failure("explain", err, io);
  }
}

export interface AuditServeOptions {
  /** Stops the server (the command stops on SIGINT and SIGTERM too). */
  signal?: AbortSignal;
}

/** The filters given with --serve, for the printed URL: the page opens on them. */
function pageQuery(args: AuditArgs): string {
  const q = new URLSearchParams();
  for (const name of [...FILTERS, "since", "from", "to"] as const) if (args[name] !== undefined) q.set(name, args[name]!);
  return q.size ? `?${q}` : "";
}

/**
 * `lookout audit --serve [--port N]`: the audit web page and the audit API on 127.0.0.1 (the handler
 * the Lambda runs, local/audit-server.ts), over the local store or, with --table, the deployed table.
 * Prints the URL; runs until Ctrl-C.
 */
export async function auditServeCommand(args: AuditArgs & { port?: string }, io: AuditIO = stdio, opts: AuditServeOptions = {}): Promise<number> {
  try {
    const port = Number(args.port ?? DEFAULT_SERVE_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new AuditQueryError("port", `"${args.port}" is not a port (0 to 65535; 0 picks a free one)`);
    // The filters are checked before the store is opened, as without --serve.
    auditQueryOf(args, new Date());
    await withAuditReader(args, async (reader) => {
      const server = await startAuditServer({ reader, port });
      io.out(`lookout audit: serving the audit trail at ${server.url}${pageQuery(args)} (Ctrl-C stops)`);
      await untilStopped(opts.signal);
      await server.close();
    });
    return 0;
  } catch (err) {
    return failure("audit", err, io);
  }
}

export const DEFAULT_SERVE_PORT = 4020;

function untilStopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    if (signal?.aborted) return stop();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    signal?.addEventListener("abort", stop);
  });
}

function failure(command: string, err: unknown, io: AuditIO): number {
  if (err instanceof AuditQueryError) {
    // The flag is named as typed: `lookout audit: --service: "abc" is not a uuid (…)`.
    io.err(`lookout ${command}: ${err.field ? "--" : ""}${err.message}`);
    return 2;
  }
  return reportFailure(command, err);
}
