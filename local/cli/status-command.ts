/**
 * `lookout status` (docs/status.md): on one machine from the local store (`data_dir`, or
 * DYNAMODB_ENDPOINT); in the cloud from the deployed table (`--table`/`--region`, or LOOKOUT_TABLE and
 * AWS_REGION without DYNAMODB_ENDPOINT), with the same code. Exit 0 healthy, 1 unhealthy or a runtime
 * error, 2 usage.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfigFile } from "../../lib/config/load.js";
import { DURATION_LIMITS, durationRangeProblem, parseDuration } from "../../lib/config/duration.js";
import { readStatus, statusLines, statusReport } from "../../lib/status/operations-report.js";
import { statusPorts, statusSettings } from "../../lib/app/status.js";
import { openLocalStore } from "../runtime/pipeline.js";
import { type Output, readingClock, reportFailure, stdio } from "./shared.js";

export interface StatusArgs {
  config: string;
  format?: string;
  table?: string;
  region?: string;
  quarantineWithin?: string;
}

class StatusUsageError extends Error {}


/** The deployed table, if the flags or the environment name one; undefined: the local store. */
export function deployedTarget(args: Pick<StatusArgs, "table" | "region">, env: NodeJS.ProcessEnv): { table: string; region?: string } | undefined {
  // LOOKOUT_TABLE beside DYNAMODB_ENDPOINT names a table on that endpoint (tests, a shared DynamoDB Local).
  const table = args.table ?? (env.DYNAMODB_ENDPOINT ? undefined : env.LOOKOUT_TABLE);
  if (!table) return undefined;
  const region = args.region ?? env.AWS_REGION;
  return { table, ...(region ? { region } : {}) };
}

function parseArgs(args: StatusArgs): { format: "table" | "json"; quarantineWithinMs?: number } {
  const format = args.format ?? "table";
  if (format !== "table" && format !== "json") throw new StatusUsageError(`--format: "${format}" is not one of table, json`);
  if (args.quarantineWithin === undefined) return { format };
  const ms = parseDuration(args.quarantineWithin);
  const far = ms ? durationRangeProblem(ms, DURATION_LIMITS.lookback) : undefined;
  if (!ms || far) throw new StatusUsageError(`--quarantine-within: "${args.quarantineWithin}" ${far ?? "is not a duration like 24h or 7d"}`);
  return { format, quarantineWithinMs: ms };
}

export async function statusCommand(
  args: StatusArgs,
  io: Output = stdio,
  env: NodeJS.ProcessEnv = process.env,
  given?: () => number,
): Promise<number> {
  try {
    const { format, quarantineWithinMs } = parseArgs(args);
    const config = loadConfigFile(args.config);
    const settings = statusSettings(config, quarantineWithinMs);
    const deployed = deployedTarget(args, env);
    const now = given ?? readingClock(config, !!deployed, io);
    const read = async (dynamodb: DynamoDBClient, tableName: string) =>
      readStatus(statusPorts(dynamodb, tableName, config.retentionMs), settings, now());
    let facts;
    if (deployed) {
      const client = new DynamoDBClient(deployed.region ? { region: deployed.region } : {});
      try {
        facts = await read(client, deployed.table);
      } finally {
        client.destroy();
      }
    } else {
      const local = await openLocalStore(config, env);
      try {
        facts = await read(local.dynamodb, local.tableName);
      } finally {
        await local.close();
      }
    }
    const report = statusReport(facts, settings);
    if (format === "json") io.out(JSON.stringify(report, null, 2));
    else for (const line of statusLines(report)) io.out(line);
    return report.verdict === "healthy" ? 0 : 1;
  } catch (err) {
    if (err instanceof StatusUsageError) {
      io.err(`lookout status: ${err.message}`);
      return 2;
    }
    return reportFailure("status", err);
  }
}
