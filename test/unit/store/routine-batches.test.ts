/**
 * Which audit indexes a batch of records that raised nothing is in (docs/audit.md, "Records that raised
 * nothing"): those of its source, service and kind; its project, environment and status are filtered
 * fields, which the planner reads through the kind's partition; and its records come back as they were.
 */
import { describe, expect, it } from "vitest";
import { recordItem } from "../../../lib/model/items.js";
import { BATCH_FILTERED_DIMENSIONS, DIMENSIONS, type Dimension, dimensionOfKey } from "../../../lib/model/audit-index.js";
import { batchRecords, routineWrite } from "../../../lib/store/routine-batches.js";
import { planQuery } from "../../../lib/audit/query-plan.js";
import { parseAuditQuery } from "../../../lib/audit/parse.js";

const AT = "2026-03-02T09:10:00.000Z";
const ORG = "org-1";
const [SVC, PRJ, ENV, WH, CLU] = ["3f2e1d0c-9b8a-4765-8432-10fedcba9876", "0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b", "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01", "6b2d8e4f-1c8a-4d2f-8b62-3a7e1f2b9c12"];

const delivery = (id: string, extra: Record<string, unknown>) =>
  recordItem({ record_kind: "webhook_delivery", id, organization_id: ORG, created_at: AT, status_code: 200, ...extra } as never, AT, AT);
const line = (id: string, extra: Record<string, unknown>) =>
  recordItem({ record_kind: "cluster_log", id, organization_id: ORG, timestamp: AT, type: "info", failed: false, ...extra } as never, AT, AT);

const service = { id: SVC, name: "api", project: { id: PRJ }, environment: { id: ENV } };
const indexKeys = (item: Record<string, unknown>) => Object.keys(item).filter((k) => k.startsWith("ix_") && k !== "ix_at").sort();

describe("a batch of records that raised nothing", () => {
  it.each([
    ["a delivery", delivery("d1", { webhook_id: WH, services: [service] }), ["ix_org", "ix_subject", "ix_what", "ix_who"], ["ix_env", "ix_project", "ix_status"]],
    ["a delivery naming no service", delivery("d2", { webhook_id: WH }), ["ix_org", "ix_what", "ix_who"], ["ix_status"]],
    ["a delivery of no webhook", delivery("d3", { services: [service] }), ["ix_org", "ix_subject", "ix_what"], ["ix_env", "ix_project", "ix_status"]],
    ["a cluster log line", line("l1", { cluster_id: CLU }), ["ix_org", "ix_subject", "ix_what"], ["ix_status"]],
    ["a cluster log line of no cluster", line("l2", {}), ["ix_org", "ix_what"], ["ix_status"]],
  ])("of %s is in the indexes of its source, service and kind; the rest are filtered fields", (_, record, keyed, filtered) => {
    const { batches } = routineWrite([record], 1_900_000_000);
    const batch = batches[0]!.item;
    expect(indexKeys(batch)).toEqual(keyed);
    const fields = Object.keys(batch.audit as object).filter((k) => k.startsWith("ix_")).sort();
    expect(fields).toEqual(filtered);
    // Every filtered field is one the planner reads batches for, through the kind's partition.
    const kind = record.record_kind as keyof typeof BATCH_FILTERED_DIMENSIONS;
    for (const f of fields) expect(BATCH_FILTERED_DIMENSIONS[kind]).toContain(dimensionOfKey((batch.audit as Record<string, unknown>)[f]));
    // Its records come back as they were written.
    expect(batchRecords(batch)).toEqual([{ ...record, expires_at: 1_900_000_000 }]);
  });

  it("is found by every filter its records match: its own partition, or its kind's filtered", () => {
    const record = delivery("d1", { webhook_id: WH, services: [service] });
    const batch = routineWrite([record], 1_900_000_000).batches[0]!.item;
    const filters: Array<[Dimension, string]> = [["project", PRJ], ["environment", ENV], ["service", SVC], ["webhook", WH], ["status", "200"]];
    for (const [dim, value] of filters) {
      const plan = planQuery(parseAuditQuery({ [dim]: value }, new Date(AT)));
      const slot = `ix_${DIMENSIONS[dim].slot}`;
      const ownPartition = plan.partitions.includes(String(batch[plan.keyAttr]));
      const kindPartition = !!plan.batches?.partitions.includes(String(batch.ix_what)) &&
        (batch.audit as Record<string, unknown>)[slot] === plan.batches.filter.values[":f1"];
      expect(ownPartition || kindPartition, dim).toBe(true);
    }
  });
});
