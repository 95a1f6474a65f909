/** Shared set-up of the benchmarks: one DynamoDB Local, fresh tables, a simulator, figures printed. */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import os from "node:os";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from "../local/dynamodb-local.js";
import { ensureTable } from "../lib/store/table.js";

let ddb: DynamoDbLocal | undefined;

export async function dynamo(): Promise<{ client: DynamoDBClient; tableName: string }> {
  const endpoint = process.env.DYNAMODB_ENDPOINT ?? (ddb ??= await startDynamoDbLocal()).endpoint;
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const tableName = `bench-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, tableName);
  return { client, tableName };
}

export async function stopDynamo() {
  await ddb?.stop();
  ddb = undefined;
}

export interface Figure {
  name: string;
  value: number | string;
  unit?: string;
  method: string;
}

export const figures: Figure[] = [];

export function report(f: Figure) {
  figures.push(f);
  const v = typeof f.value === "number" ? (Number.isInteger(f.value) ? String(f.value) : f.value.toFixed(2)) : f.value;
  console.log(`  ${f.name.padEnd(64)} ${v}${f.unit ? ` ${f.unit}` : ""}`);
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const machine = () => `${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
