import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { tableDefinition } from "../../../lib/store/table.js";
import { TTL_ATTRIBUTE } from "../../../lib/model/items.js";

const sortBy = <T>(xs: T[] | undefined, key: (x: T) => string) => [...(xs ?? [])].sort((a, b) => key(a).localeCompare(key(b)));

describe("the table in infra/ and the table the code creates", () => {
  const cfn = parse(readFileSync("infra/table.yml", "utf8")).Resources.LookoutTable.Properties;
  const code = tableDefinition("x");

  it("have the same keys, attributes and indexes", () => {
    expect(cfn.KeySchema).toEqual(code.KeySchema);
    expect(sortBy(cfn.AttributeDefinitions, (a: any) => a.AttributeName)).toEqual(sortBy(code.AttributeDefinitions, (a) => a.AttributeName!));
    expect(sortBy(cfn.GlobalSecondaryIndexes ?? [], (i: any) => i.IndexName)).toEqual(sortBy(code.GlobalSecondaryIndexes ?? [], (i) => i.IndexName!));
    expect(cfn.BillingMode).toBe(code.BillingMode);
  });

  it("have the same stream, and the cloud one has TTL, point-in-time recovery and encryption", () => {
    expect(cfn.StreamSpecification.StreamViewType).toBe(code.StreamSpecification?.StreamViewType);
    expect(cfn.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
    expect(cfn.PointInTimeRecoverySpecification.PointInTimeRecoveryEnabled).toBe(true);
    expect(cfn.SSESpecification.SSEEnabled).toBe(true);
  });
});
