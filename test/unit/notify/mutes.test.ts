import { describe, expect, it } from "vitest";
import { activeMute, scopeMatches } from "../../../lib/notify/mutes.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import type { Mute } from "../../../lib/model/notify-store.js";

const failed = EXAMPLE_DETAILS["Deployment Failed"];
const now = new Date("2026-06-01T10:00:00Z");
const mute = (scope: Mute["scope"], over: Partial<Mute> = {}): Mute => ({
  id: "m", scope, until: "2026-06-01T12:00:00Z", reason: "r", created_by: "ann", created_at: "2026-06-01T09:00:00Z", ...over,
});

describe("mute scopes", () => {
  it("match by id or by name, with service wildcards, like routes", () => {
    expect(scopeMatches({ environment: failed.environment!.name! }, failed)).toBe(true);
    expect(scopeMatches({ environment: failed.environment!.id.toUpperCase() }, failed)).toBe(true);
    expect(scopeMatches({ service: `${failed.service!.name!.slice(0, 2)}*` }, failed)).toBe(true);
    expect(scopeMatches({ service: "nope-*" }, failed)).toBe(false);
    expect(scopeMatches({ environment: failed.environment!.name!, project: "other" }, failed)).toBe(false);
  });

  it("apply only while active, and never to Lookout's own health events", () => {
    const scope = { organization: failed.organization.id };
    expect(activeMute(failed, [mute(scope)], now)?.id).toBe("m");
    expect(activeMute(failed, [mute(scope, { until: "2026-06-01T09:59:59Z" })], now)).toBeUndefined();
    expect(activeMute(failed, [mute(scope, { lifted_at: "2026-06-01T09:30:00Z" })], now)).toBeUndefined();
    expect(activeMute(failed, [mute(scope, { created_at: "2026-06-01T11:00:00Z" })], now)).toBeUndefined();
    expect(activeMute(EXAMPLE_DETAILS["Lookout Health"], [mute({ organization: EXAMPLE_DETAILS["Lookout Health"].organization.id })], now)).toBeUndefined();
  });
});
