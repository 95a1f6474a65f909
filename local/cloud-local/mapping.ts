/**
 * What the two kinds of event source mapping share (stream-mapping.ts, sqs-mapping.ts): the template's
 * properties common to both, and the function's answer read as Lambda reads it for a batch.
 */
import type { Invocation } from "./call-function.js";
import type { Filter } from "./event-pattern.js";

/** An `AWS::Lambda::EventSourceMapping`'s properties, resolved, that both kinds play. */
export interface MappingProperties {
  FunctionName: string;
  EventSourceArn: string;
  Enabled?: boolean;
  BatchSize?: number;
  FunctionResponseTypes?: string[];
  FilterCriteria?: { Filters?: Filter[] };
}

/** How a batch ended, as Lambda reads the function's answer. */
export type BatchOutcome =
  | { kind: "ok" }
  /** Every identifier named a record of the batch. */
  | { kind: "partial"; failed: string[] }
  /** The answer reported failures Lambda cannot place: the whole batch failed. */
  | { kind: "invalid"; why: string }
  | { kind: "error"; errorType: string; errorMessage: string };

/**
 * With `ReportBatchItemFailures`, an answer `{batchItemFailures: [{itemIdentifier}]}` fails those
 * records; no answer, no list or an empty one is a success; an identifier that is empty, missing or
 * not of the batch fails the whole batch, as Lambda does. Without it, any answer is a success.
 */
export function batchOutcome(inv: Invocation, ids: ReadonlySet<string>, reportsItemFailures: boolean): BatchOutcome {
  if (!inv.ok) return { kind: "error", errorType: inv.errorType, errorMessage: inv.errorMessage };
  if (!reportsItemFailures) return { kind: "ok" };
  const list = (inv.payload as { batchItemFailures?: unknown } | null | undefined)?.batchItemFailures;
  if (list === undefined || list === null) return { kind: "ok" };
  if (!Array.isArray(list)) return { kind: "invalid", why: "batchItemFailures is not a list" };
  const failed: string[] = [];
  for (const f of list) {
    const id = (f as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== "string" || !ids.has(id)) return { kind: "invalid", why: `batchItemFailures names ${JSON.stringify(id ?? null)}, not a record of the batch` };
    failed.push(id);
  }
  return failed.length ? { kind: "partial", failed } : { kind: "ok" };
}

export const reportsItemFailures = (p: MappingProperties) => p.FunctionResponseTypes?.includes("ReportBatchItemFailures") ?? false;

/** The last part of an ARN: a queue's name. */
export const arnName = (arn: string) => arn.slice(arn.lastIndexOf(":") + 1);

/** An ARN's region (`arn:aws:sqs:REGION:…`). */
export const arnRegion = (arn: string) => arn.split(":")[3] ?? "";

/** A body that is JSON as its value, any other as the string: what filters and pipe paths see. */
export function bodyValue(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** Binary values travel base64 in Lambda's events; the SDK hands them over as bytes. */
export const base64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
