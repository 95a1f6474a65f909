/**
 * `lookout report`: the delivery figures (docs/report.md) from the same store `lookout audit` reads —
 * the local one (`data_dir`, or DYNAMODB_ENDPOINT) or, with `--table`, the deployed table.
 */
import { parseReportQuery, readReportInput } from "../../lib/audit/delivery-report-read.js";
import { deliveryReport } from "../../lib/audit/delivery-report.js";
import { reportCsv, reportLines } from "../../lib/audit/delivery-report-format.js";
import type { AuditReader } from "../../lib/audit/trail.js";
import type { Config } from "../../lib/config/load.js";
import { type Output, formatOf, jsonDocument, readingClock, stdio } from "./shared.js";
import { REPORT_FORMATS } from "./choices.js";
import type { StoreTarget } from "./store-target.js";
import { type AuditArgs, failure, resolveScopeNames, withAuditReader, withoutNames } from "./audit-commands.js";

export type ReportArgs = StoreTarget & { service?: string; environment?: string; since?: string; from?: string; to?: string; format?: string };

const rawOf = (a: ReportArgs) => ({ service: a.service, environment: a.environment, since: a.since, from: a.from, to: a.to });

export async function reportCommand(args: ReportArgs, io: Output = stdio, reader?: AuditReader, config?: Config): Promise<number> {
  try {
    const format = formatOf(args.format, REPORT_FORMATS);
    const now = new Date();
    // The flags are checked (names aside) before the store is opened.
    parseReportQuery(rawOf(withoutNames(args as AuditArgs) as ReportArgs), now);
    const read = async (r: AuditReader, c?: Config) => {
      const at = new Date(readingClock(c, !!args.table, io)());
      const q = parseReportQuery(rawOf((await resolveScopeNames(args as AuditArgs, r, c, at)) as ReportArgs), at);
      return deliveryReport(await readReportInput(r, q, at), q.period);
    };
    const report = reader ? await read(reader, config) : await withAuditReader(args, read);
    if (format === "json") io.out(jsonDocument(report));
    // RFC 4180 lines end in CRLF; `out` adds the LF.
    else if (format === "csv") for (const line of reportCsv(report)) io.out(line.slice(0, -1));
    else for (const line of reportLines(report)) io.out(line);
    return 0;
  } catch (err) {
    return failure("report", err, io);
  }
}
