/**
 * Generated pages for the hostile-input property (test/integration/poll/poll.hostile-property.test.ts, and
 * `npm run bench -- property` for 100,000 cases): deployment history and webhook delivery lists that mix
 * genuine records with hostile ones — a field at 3,000 or 70,000 characters, null, a number, control
 * characters, an odd timestamp, JSON nested far deeper than DynamoDB allows.
 */
import fc from "fast-check";
import { randomUUID } from "node:crypto";
import { pollSource, type PollDeps } from "../../lib/poll/poll.js";
import type { LookoutEventDetail } from "../../lib/model/event.js";
import { nestedJson, type HostilePlatform } from "./hostile-platform.js";

type Json = Record<string, unknown>;
const MIN = 60_000;

export const DEPLOYMENT_FIELDS = [
  "identifier.name", "identifier.service_id", "identifier.execution_id", "status", "auditing_data.created_at",
  "auditing_data.updated_at", "auditing_data.triggered_by", "auditing_data.origin", "details.commit.git_commit_id",
  "details.commit.tag", "details.commit.message", "details.commit.author_name", "details.commit.commit_page_url",
  "status_details.status", "total_duration",
] as const;
export const DELIVERY_FIELDS = ["id", "created_at", "kind", "matched_event", "target_url_used", "target_response_body", "request", "target_response_status_code"] as const;

/** A hostile value: too long, absent, of the wrong type, full of control characters, a strange time, too deep. */
export const hostileValue = fc.oneof(
  fc.constantFrom(3_000, 70_000).map((n) => `HOSTILE-${"x".repeat(n)}`),
  fc.constant(null),
  fc.integer(),
  fc.constant("\u0000\u001b[31m<!channel>\r\n\u2028\u0007"),
  fc.constantFrom("9999-12-31T23:59:59Z", "2026-11-23T10:00:00.123456789+02:00", "2026-11-23T08:00:00", "not a time", "0001-01-01T00:00:00Z"),
  fc.constant(nestedJson(64)),
);

export interface Slot {
  hostile: boolean;
  /** Genuine: the status it ends in. Hostile: the field replaced and its value. */
  status: string;
  field: string;
  value: unknown;
}

export const pageArb = (fields: readonly string[], statuses: readonly string[]) =>
  fc.array(
    fc.oneof(
      fc.record({ hostile: fc.constant(false), status: fc.constantFrom(...statuses), field: fc.constant(""), value: fc.constant(null) }),
      fc.record({ hostile: fc.constant(true), status: fc.constantFrom(...statuses), field: fc.constantFrom(...fields), value: hostileValue }),
    ),
    { minLength: 1, maxLength: 5 },
  );

/** A generated case: a deployment history page or a webhook delivery list. */
export const pageCaseArb = fc.oneof(
  pageArb(DEPLOYMENT_FIELDS, ["DEPLOYMENT_ERROR", "BUILD_ERROR", "DEPLOYED", "BUILDING", "CANCELED"]).map((slots) => ({ kind: "deployment" as const, slots })),
  pageArb(DELIVERY_FIELDS, ["DEPLOYMENT_ERROR", "DEPLOYED"]).map((slots) => ({ kind: "webhook" as const, slots })),
);

function set(o: Json, path: string, value: unknown): Json {
  const copy = structuredClone(o);
  const keys = path.split(".");
  let cur = copy as Json;
  for (const k of keys.slice(0, -1)) cur = (cur[k] !== null && typeof cur[k] === "object" ? cur[k] : (cur[k] = {})) as Json;
  cur[keys.at(-1)!] = value;
  return copy;
}

const iso = (ago: number) => new Date(Date.now() - ago).toISOString();

function deployment(app: string, exec: string, status: string, ago: number): Json {
  return {
    identifier: { name: "api", service_id: app, service_type: "APPLICATION", execution_id: exec },
    status,
    auditing_data: { created_at: iso(ago + MIN), updated_at: iso(ago), triggered_by: "ann@example.com", origin: "GIT" },
    details: { commit: { git_commit_id: "0123456789abcdef", tag: "v1", message: "fix", author_name: "Ann", commit_page_url: "https://git.example.com/c/1" } },
    status_details: { action: "DEPLOY", status: "ERROR", sub_action: "NONE" },
    total_duration: "PT2M",
  };
}

function delivery(id: string, status: number, ago: number): Json {
  return {
    id, created_at: iso(ago), kind: "STANDARD", matched_event: "DEPLOYMENT_FAILURE", target_url_used: "https://hooks.example.com/in",
    request: { payload: { applications: [{ id: randomUUID(), name: "api" }] } }, target_response_status_code: status, target_response_body: "x",
  };
}

export interface CaseOutcome {
  /** Sentences, one per broken invariant; empty when the case holds. */
  problems: string[];
}

/**
 * One case: a fresh source read with the page (at first sight), then again. Every genuine
 * failure raises exactly one alert; both reads of the page succeed; every hostile record is stored or
 * quarantined; the last read raises and stores nothing.
 */
export async function runPageCase(
  kind: "deployment" | "webhook",
  slots: Slot[],
  org: string,
  platform: HostilePlatform,
  deps: PollDeps,
): Promise<CaseOutcome> {
  const id = randomUUID();
  const path = kind === "deployment" ? `/application/${id}/deploymentHistoryV2` : `/organization/${org}/webhook/${id}/event`;
  const source = { kind, organizationId: org, id } as const;
  const alerts: LookoutEventDetail[] = [];
  const caseDeps: PollDeps = { ...deps, onAlert: (d, suppression) => void (suppression ? undefined : alerts.push(d)) };
  const problems: string[] = [];

  // The page is read at first sight: its records are fresh, so within the backfill window and alerted.

  const genuine: string[] = [];
  const hostile: string[] = [];
  const items = slots.map((s, i) => {
    const recordId = `${s.hostile ? "h" : "g"}${i}-${randomUUID()}`;
    if (kind === "deployment") {
      const item = deployment(id, recordId, s.status, (i + 1) * 1000);
      if (!s.hostile) {
        if (s.status.endsWith("_ERROR")) genuine.push(recordId);
        return item;
      }
      hostile.push(recordId);
      return set(item, s.field, s.value);
    }
    const code = s.status.endsWith("_ERROR") ? 503 : 200;
    const item = delivery(recordId, code, (i + 1) * 1000);
    if (!s.hostile) {
      if (code !== 200) genuine.push(recordId);
      return item;
    }
    hostile.push(recordId);
    return set(item, s.field, s.value);
  });
  platform.list(path, items);

  const second = await pollSource({ source, previousPollAt: new Date().toISOString() }, caseDeps);
  if (!second.ok) problems.push(`the read of the page failed: ${second.error?.message}`);
  const third = await pollSource({ source, previousPollAt: new Date().toISOString() }, caseDeps);
  if (!third.ok) problems.push(`the read after it failed: ${third.error?.message}`);
  if (third.alerts || third.newRecords) problems.push(`the read after it raised ${third.alerts} alerts and stored ${third.newRecords} records`);

  const idOf = (d: LookoutEventDetail) => (kind === "deployment" ? d.deployment?.execution_id : d.http?.delivery_id ?? d.record?.id);
  for (const g of genuine) {
    const n = alerts.filter((d) => idOf(d) === g).length;
    if (n !== 1) problems.push(`genuine failure ${g} alerted ${n} times`);
  }
  // Stored (its id, maybe clipped, is known) or quarantined (counted), every hostile record.
  const cursor = await deps.store.getCursor(`${kind}:${org}/${id}`);
  const known = kind === "deployment" ? (cursor?.deployments ?? []).map((d) => d.execution_id) : (cursor?.seen ?? []);
  const stored = hostile.filter((h) => known.some((k) => k.startsWith(h.slice(0, 20)))).length;
  const quarantined = second.quarantined ?? 0;
  // A hostile value in the id itself replaces the id: count those by what was stored beside the genuine.
  const hostileIds = slots.filter((s) => s.hostile && (s.field === "identifier.execution_id" || s.field === "id")).length;
  if (stored + quarantined + hostileIds < hostile.length) {
    problems.push(`${hostile.length - stored - quarantined - hostileIds} hostile record(s) neither stored nor quarantined`);
  }
  return { problems };
}
