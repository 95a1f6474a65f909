/**
 * `lookout audit` and `lookout explain`: the audit trail from the local store (`data_dir`, or
 * DYNAMODB_ENDPOINT) or, with `--table`, from the deployed table (AWS credentials from the environment).
 * Output goes through `out` (rows, tables) and `err` (the next-page cursor for scripts, problems), so
 * tests capture both.
 */
import { AuditQueryError, FILTERS, type FilterName } from "../../lib/audit/model.js";
import { parseAuditQuery, type RawQuery } from "../../lib/audit/parse.js";
import { AuditTrail, type AuditReader } from "../../lib/audit/trail.js";
import { DynamoAuditItems } from "../../lib/store/audit-store.js";
import { csvHeader, csvRow, explanationLines, jsonLine, tableLines } from "../../lib/audit/output-formats.js";
import type { AuditRow } from "../../lib/model/audit-row.js";
import type { Config } from "../../lib/config/load.js";
import { type Output, formatOf, readingClock, jsonDocument, reportFailureTo, stdio } from "./shared.js";
import { AUDIT_FORMATS, DEFAULT_SERVE_PORT } from "./choices.js";
import { type StoreTarget, withStore } from "./store-target.js";
import { NAMED_SCOPES, isUuid, namesFrom, resolveName } from "./scope-names.js";
import { startAuditServer } from "../runtime/audit-server.js";
import { withEarlierPreviewDeliveries } from "../runtime/preview-route.js";


export type AuditArgs = StoreTarget & Partial<Record<FilterName | "since" | "from" | "to" | "limit" | "cursor", string>> & { format?: string };

/** `lookout audit --format json`: the page and, when there is more, the cursor of the next. */
export interface AuditPageJson {
  rows: AuditRow[];
  next_cursor: string | null;
}

export async function withAuditReader<T>(target: StoreTarget, fn: (reader: AuditReader, config?: Config) => Promise<T>): Promise<T> {
  return withStore(target, ({ client, tableName, config }) => {
    const items = new DynamoAuditItems({ client, tableName });
    // Only the local store holds the terminal preview's deliveries, some of them of an earlier format.
    return fn(new AuditTrail(target.table ? items : withEarlierPreviewDeliveries(items)), config);
  });
}

/** The flags without the names among them: what can be checked before the store is opened. */
export const withoutNames = (args: AuditArgs): AuditArgs => {
  const out = { ...args };
  for (const scope of NAMED_SCOPES) if (out[scope] !== undefined && !isUuid(out[scope]!)) delete out[scope];
  return out;
};

/** The flags with names (`--environment production`) replaced by the ids they stand for. */
export async function resolveScopeNames(args: AuditArgs, reader: AuditReader, config: Config | undefined, now: Date): Promise<AuditArgs> {
  const named = NAMED_SCOPES.filter((scope) => args[scope] !== undefined && !isUuid(args[scope]!));
  if (!named.length) return args;
  const known = await namesFrom(reader, config, now);
  const out = { ...args };
  for (const scope of named) out[scope] = resolveName(scope, args[scope]!, known);
  return out;
}

/** The query the flags ask for; the store is not opened when they are wrong. */
export function auditQueryOf(args: AuditArgs, now: Date) {
  const raw: RawQuery = {};
  for (const name of [...FILTERS, "since", "from", "to", "limit", "cursor"] as const) raw[name] = args[name];
  return parseAuditQuery(raw, now);
}

export async function auditCommand(args: AuditArgs, io: Output = stdio, reader?: AuditReader, config?: Config): Promise<number> {
  try {
    const format = formatOf(args.format, AUDIT_FORMATS);
    const now = new Date();
    // The flags are checked (names aside) before the store is opened.
    auditQueryOf(withoutNames(args), now);
    const read = async (r: AuditReader, c?: Config) => {
      const at = new Date(readingClock(c, !!args.table, io)());
      return r.query(auditQueryOf(await resolveScopeNames(args, r, c, at), at));
    };
    const page = reader ? await read(reader, config) : await withAuditReader(args, read);
    if (format === "json") {
      const doc: AuditPageJson = { rows: page.rows, next_cursor: page.cursor ?? null };
      io.out(jsonDocument(doc));
    } else if (format === "ndjson") {
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

export async function explainCommand(id: string, args: StoreTarget & { format?: string }, io: Output = stdio, reader?: AuditReader): Promise<number> {
  try {
    const format = formatOf(args.format, ["text", "json"] as const);
    const explanation = reader ? await reader.explain(id) : await withAuditReader(args, (r) => r.explain(id));
    if (!explanation) {
      io.err(`lookout explain: no record, alert or execution ${id} (take the ID column of lookout audit; executions are <service id>:<execution id>)`);
      return 1;
    }
    if (format === "json") io.out(jsonDocument(explanation));
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
 * the Lambda runs, local/runtime/audit-server.ts), over the local store or, with --table, the deployed table.
 * Prints the URL; runs until Ctrl-C.
 */
export async function auditServeCommand(args: AuditArgs & { port?: string }, io: Output = stdio, opts: AuditServeOptions = {}): Promise<number> {
  try {
    const port = Number(args.port ?? DEFAULT_SERVE_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new AuditQueryError("port", `"${args.port}" is not a port (0 to 65535; 0 picks a free one)`);
    // The filters are checked before the store is opened, as without --serve.
    const now = new Date();
    auditQueryOf(withoutNames(args), now);
    await withAuditReader(args, async (reader, config) => {
      const clock = readingClock(config, !!args.table, io);
      const resolved = await resolveScopeNames(args, reader, config, new Date(clock()));
      const server = await startAuditServer({ reader, port, now: () => new Date(clock()) });
      io.out(`lookout audit: serving the audit trail at ${server.url}${pageQuery(resolved)} (Ctrl-C stops)`);
      await untilStopped(opts.signal);
      await server.close();
    });
    return 0;
  } catch (err) {
    return failure("audit", err, io);
  }
}

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

export function failure(command: string, err: unknown, io: Output): number {
  if (err instanceof AuditQueryError) {
    // The flag is named as typed: `lookout audit: --service: "abc" is not a uuid (…)`.
    io.err(`lookout ${command}: ${err.field ? "--" : ""}${err.message}`);
    return 2;
  }
  return reportFailureTo(command, err, io.err);
}
