/**
 * docs/events.schema.json, docs/events.md and the TypeScript event model agree: the examples (typed, one
 * per detail-type) satisfy the schema; the schema lists exactly the model's fields; the page shows the
 * same examples and names every field; what the builders produce satisfies the schema.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import * as ajvModule from "ajv/dist/2020.js";
import * as formatsModule from "ajv-formats";
import type { ValidateFunction } from "ajv";
import type {
  ChangeFacts,
  CommitFacts,
  DeploymentFacts,
  DetailType,
  ErrorFacts,
  HealthFacts,
  HttpFacts,
  IncidentFacts,
  LookoutEventDetail,
  RecordRef,
  LookoutEventEnvelope,
  NamedRef,
} from "../../../lib/model/event.js";
import { DETAIL_TYPES } from "../../../lib/model/event.js";
import { toEnvelope } from "../../../lib/alerts/publish.js";
import { clusterDetail, clusterRecoveredDetail, deliveryDetail, deploymentDetail, targetRecoveredDetail } from "../../../lib/alerts/build.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

// ajv is CommonJS: its default export sits one level down under ESM interop.
const unwrap = <T>(m: unknown): T => ((m as { default?: { default?: T } }).default?.default ?? (m as { default: T }).default) as T;
const Ajv2020 = unwrap<typeof ajvModule.default.default>(ajvModule);
const addFormats = unwrap<typeof formatsModule.default.default>(formatsModule);

type Schema = Record<string, unknown> & { $defs: Record<string, { properties?: Record<string, unknown> }> };
const schema = JSON.parse(readFileSync(new URL("../../../docs/events.schema.json", import.meta.url), "utf8")) as Schema;
const page = readFileSync(new URL("../../../docs/events.md", import.meta.url), "utf8");

function compile(s: Schema) {
  // Strict about unknown keywords and formats; not about if/then fragments (`required`, `properties`
  // without `type`), which are idiomatic there.
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
  addFormats(ajv);
  ajv.addSchema(s);
  return {
    detail: ajv.getSchema(s.$id as string)! as ValidateFunction,
    envelope: ajv.getSchema(`${s.$id as string}#/$defs/envelope`)! as ValidateFunction,
  };
}
const v = compile(schema);

/** The schema with every object closed: catches fields a detail has that the schema does not declare. */
function strictSchema(): Schema {
  const copy = structuredClone(schema);
  const close = (node: unknown) => {
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    if (o.properties && o.type === "object") o.additionalProperties = false;
    Object.values(o).forEach(close);
  };
  close(copy.$defs);
  copy.$id = "urn:lookout:events:v1:strict";
  return copy;
}
const strict = compile(strictSchema());

const envelopeOf = (d: LookoutEventDetail): LookoutEventEnvelope =>
  toEnvelope(d, { account: "123456789012", region: "eu-west-1", time: d.observed_at, eventId: "8f1d2c3b-4a5e-4f60-8172-93a4b5c6d7e8" });

const errorsOf = (fn: ValidateFunction, data: unknown) => (fn(data) ? [] : fn.errors!.map((e) => `${e.instancePath} ${e.message}`));

// The model's fields, listed here and checked exhaustive by tsc: a field added to lib/model/event.ts fails to
// compile until it is listed, and then fails the test until the schema and the page have it.
type Exhaustive<T, K extends readonly PropertyKey[]> = [Exclude<keyof T, K[number]>] extends [never] ? K : never;
const list = <T>() => <const K extends readonly (keyof T)[]>(k: Exhaustive<T, K>) => k;
const FIELDS = {
  detail: list<LookoutEventDetail>()(["version", "id", "kind", "transition", "severity", "organization", "project", "environment", "service", "cluster", "webhook", "status", "occurred_at", "observed_at", "summary", "deployment", "error", "http", "health", "record", "incident_id", "incident", "amends", "link", "clipped"]),
  namedRef: list<NamedRef>()(["id", "name"]),
  typedRef: list<NonNullable<LookoutEventDetail["environment"]> & NonNullable<LookoutEventDetail["service"]>>()(["id", "name", "type"]),
  deployment: list<DeploymentFacts>()(["execution_id", "commit", "triggered_by", "triggered_by_name", "origin", "duration", "duration_sec", "failure_count", "previous_status", "changes"]),
  changes: list<ChangeFacts>()(["since_commit", "until_commit", "commits", "total", "more", "note"]),
  incident: list<IncidentFacts>()(["subject", "opened_at", "failures", "repeat", "duration_sec", "resolved_by"]),
  commit: list<CommitFacts>()(["id", "short_id", "message", "author", "link", "tag"]),
  error: list<ErrorFacts>()(["tag", "message", "hint", "link", "step"]),
  http: list<HttpFacts>()(["delivery_id", "status_code", "target_host", "matched_event", "delivery_kind", "response_excerpt"]),
  health: list<HealthFacts>()(["check", "subject", "detail", "consecutive_failures"]),
  record: list<RecordRef>()(["type", "id", "timestamp", "step"]),
  envelope: list<LookoutEventEnvelope>()(["version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail"]),
} as const;

describe("docs/events.schema.json", () => {
  it.each(Object.entries(EXAMPLE_DETAILS))("accepts the %s example, as a detail and in its envelope", (_dt, detail) => {
    expect(errorsOf(v.detail, detail)).toEqual([]);
    expect(errorsOf(v.envelope, envelopeOf(detail))).toEqual([]);
    expect(errorsOf(strict.detail, detail)).toEqual([]);
  });

  it("has an example for every detail-type", () => {
    expect(Object.keys(EXAMPLE_DETAILS).sort()).toEqual(Object.values(DETAIL_TYPES).sort());
  });

  it("declares exactly the fields of the TypeScript model", () => {
    for (const [def, fields] of Object.entries(FIELDS)) {
      expect(Object.keys(schema.$defs[def]!.properties!).sort(), def).toEqual([...fields].sort());
    }
  });

  it("uses the model's detail-types", () => {
    const envProps = schema.$defs.envelope!.properties as Record<string, { enum?: string[] }>;
    expect([...envProps["detail-type"]!.enum!].sort()).toEqual(Object.values(DETAIL_TYPES).sort());
  });

  it("rejects what breaks the contract", () => {
    const d = EXAMPLE_DETAILS["Deployment Failed"];
    const { summary: _s, ...noSummary } = d;
    const bad: [string, unknown, ValidateFunction][] = [
      ["no summary", noSummary, v.detail],
      ["a future version", { ...d, version: 2 }, v.detail],
      ["a webhook transition on a deployment", { ...d, transition: "delivery_failed" }, v.detail],
      ["a deployment without its execution", { ...d, deployment: undefined }, v.detail],
      ["a delivery without http", { ...EXAMPLE_DETAILS["Webhook Delivery Failed"], http: undefined }, v.detail],
      ["a time that is not RFC 3339", { ...d, occurred_at: "yesterday" }, v.detail],
      ["a detail-type that disagrees with the detail", { ...envelopeOf(d), "detail-type": "Deployment Recovered" }, v.envelope],
      ["another source", { ...envelopeOf(d), source: "aws.events" }, v.envelope],
    ];
    for (const [why, data, fn] of bad) expect(fn(JSON.parse(JSON.stringify(data))), why).toBe(false);
  });

  it("accepts what the builders of lib/alerts/build.ts produce", () => {
    const observedAt = "2026-03-02T14:08:02.114Z";
    const details: LookoutEventDetail[] = [
      deploymentDetail({
        obs: {
          record_kind: "deployment", organization_id: "org-1", application_id: "app-1", service_id: "svc-1", service_name: "api",
          execution_id: "exec-1", execution_id_derived: false, status: "DEPLOYMENT_ERROR", created_at: "2026-03-02T14:00:00Z",
          updated_at: "2026-03-02T14:07:31.123456Z", triggered_by: "dana@acme.io", origin: "GIT", total_duration: "PT7M31S",
          commit: { id: "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3", message: "fix", author: "Dana", link: "https://git.example/c/a94a8fe" },
        },
        transition: "failed",
        ctx: { project: { id: "p-1", name: "shop" }, environment: { id: "e-1", name: "prod", type: "PRODUCTION" } },
        observedAt,
        previousStatus: "DEPLOYING",
      }),
      deliveryDetail(
        {
          record_kind: "webhook_delivery", id: "dl-1", organization_id: "org-1", webhook_id: "wh-1", created_at: "2026-03-02T14:07:33Z",
          status_code: null, failed: true, target_host: "hooks.acme.io", services: [],
        },
        observedAt,
      ),
      clusterDetail(
        {
          record_kind: "cluster_log", id: "cl-1", organization_id: "org-1", cluster_id: "c-1", timestamp: "2026-03-02T13:55:10.123456789Z",
          type: "error", step: "CreateError", failed: true, error: { tag: "InsufficientCapacity", message: "no quota" },
        },
        observedAt,
        { id: "c-1", name: "eu-prod" },
      ),
    ];
    const incident = { subject: "cluster:c-1", opened_at: "2026-03-02T13:55:10.000Z", failures: 2, duration_sec: 60, resolved_by: "quiet for 30m" };
    const closes = [
      targetRecoveredDetail(
        { record_kind: "webhook_delivery", id: "dl-2", organization_id: "org-1", webhook_id: "wh-1", created_at: "2026-03-02T14:07:40Z", status_code: 200, failed: false, target_host: "hooks.acme.io", services: [] },
        { incident_id: "inc-1", incident: { ...incident, subject: "webhook:wh-1:hooks.acme.io" }, refs: { service: { id: "svc-1", name: "api" } } },
        observedAt,
      ),
      clusterRecoveredDetail({ organization_id: "org-1", cluster_id: "c-1" }, { incident_id: "inc-2", incident, closed_at: "2026-03-02T14:25:10.000Z" }, observedAt),
    ];
    for (const d of closes) {
      expect(errorsOf(strict.detail, d), d.transition).toEqual([]);
      expect(errorsOf(v.envelope, envelopeOf(d)), d.transition).toEqual([]);
    }
    // Every event but health names the platform record it is about (docs/events.md, 1.1).
    expect(details.map((d) => d.record)).toEqual([
      { type: "deployment_execution", id: "exec-1" },
      { type: "webhook_delivery", id: "dl-1" },
      { type: "cluster_log_entry", id: "cl-1", timestamp: "2026-03-02T13:55:10.123456789Z", step: "CreateError" },
    ]);
    expect(details[1]!.http?.delivery_id).toBe("dl-1");
    for (const d of details) {
      expect(errorsOf(strict.detail, d), d.kind).toEqual([]);
      expect(errorsOf(v.envelope, envelopeOf(d)), d.kind).toEqual([]);
    }
  });
});

describe("docs/events.md", () => {
  const blocks = [...page.matchAll(/^### (.+)\n\n```json\n([\s\S]*?)\n```/gm)].map((m) => ({ heading: m[1]!, json: JSON.parse(m[2]!) as LookoutEventEnvelope }));

  it("shows one example envelope per detail-type, each the typed example, each valid", () => {
    expect(blocks.map((b) => b.heading).sort()).toEqual(Object.values(DETAIL_TYPES).sort());
    for (const { heading, json } of blocks) {
      expect(json["detail-type"]).toBe(heading);
      expect(json.detail).toEqual(EXAMPLE_DETAILS[heading as DetailType]);
      expect(errorsOf(v.envelope, json), heading).toEqual([]);
    }
  });

  it("describes every detail-type and every field", () => {
    for (const dt of Object.values(DETAIL_TYPES)) expect(page).toContain(`| \`${dt}\` |`);
    const paths = [
      ...FIELDS.detail,
      ...FIELDS.deployment.map((f) => `deployment.${f}`),
      ...FIELDS.commit.map((f) => `deployment.commit.${f}`),
      ...FIELDS.changes.map((f) => `deployment.changes.${f}`),
      ...FIELDS.incident.map((f) => `incident.${f}`),
      ...FIELDS.error.map((f) => `error.${f}`),
      ...FIELDS.http.map((f) => `http.${f}`),
      ...FIELDS.health.map((f) => `health.${f}`),
      ...FIELDS.record.map((f) => `record.${f}`),
    ];
    for (const p of paths) expect(page, p).toContain(`| \`${p}\` |`);
    for (const f of FIELDS.envelope) expect(page, f).toContain(`| \`${f}\` |`);
  });
});
