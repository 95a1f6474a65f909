import { describe, expect, it } from "vitest";
import { fillPath } from "../../../lib/platform/endpoints.js";
import { specEndpointNames as endpointNames, specEndpoints as endpoints } from "../../../local/simulator/endpoints.js";
import { SecretRequest } from "../../../local/simulator/schemas.js";
import { generateClusterRun } from "../../../local/simulator/cluster-log-runs.js";
import { addCommit, selectCommits } from "../../../local/simulator/commits.js";
import { Faults } from "../../../local/simulator/faults.js";
import { RandomSource, Rng } from "../../../local/simulator/ids.js";
import type { Cluster } from "../../../local/simulator/state.js";
import { RateLimiter } from "../../../local/simulator/rate-limit.js";
import { check, resolveComponent } from "../../../local/simulator/resolve.js";
import { Schedule } from "../../../local/simulator/schedule.js";
import { describeIssue, matchRoute } from "../../../local/simulator/validate.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("ids", () => {
  it("gives the same v4 uuids for the same seed and stream, independent of other streams", () => {
    const a = new RandomSource(5);
    const b = new RandomSource(5);
    b.uuid("webhook"); // drawing from another stream must not shift the application ids
    const ids = [a.uuid("application"), a.uuid("application")];
    expect([b.uuid("application"), b.uuid("application")]).toEqual(ids);
    expect(new RandomSource(6).uuid("application")).not.toBe(ids[0]);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it("draws integers in range and shuffles without losing items", () => {
    const rng = new Rng("t");
    const ints = Array.from({ length: 1000 }, () => rng.int(3, 5));
    expect(new Set(ints)).toEqual(new Set([3, 4, 5]));
    expect(rng.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("schedule", () => {
  it("fires due actions in time order, then insertion order", () => {
    const s = new Schedule();
    const fired: string[] = [];
    s.add(30, () => fired.push("c"));
    s.add(10, () => fired.push("a"));
    s.add(10, () => fired.push("b"));
    s.add(99, () => fired.push("late"));
    expect(s.runDue(30)).toBe(3);
    expect(fired).toEqual(["a", "b", "c"]);
    expect(s.size).toBe(1);
  });
});

describe("faults", () => {
  it("applies a fault `times` times, endpoint faults before the wildcard", () => {
    const f = new Faults();
    f.set("*", { status: 503 });
    f.set("listProjects", { status: 429, times: 2 });
    expect(f.take("listProjects")?.status).toBe(429);
    expect(f.take("listProjects")?.status).toBe(429);
    expect(f.take("listProjects")?.status).toBe(503);
    expect(f.take("listClusterLogs")?.status).toBe(503);
    f.clear("*");
    expect(f.take("listClusterLogs")).toBeUndefined();
    expect(() => f.set("*", { status: 500, times: 0 })).toThrow(RangeError);
  });
});

describe("rate limiter", () => {
  it("counts per token over simulated hours and says when the window resets", () => {
    const r = new RateLimiter(2);
    const t = Date.parse("2026-01-01T10:59:00Z");
    expect(r.hit("a", t)).toMatchObject({ remaining: 1, exceeded: false, reset: Date.parse("2026-01-01T11:00:00Z") / 1000 });
    expect(r.hit("a", t).remaining).toBe(0);
    expect(r.hit("a", t)).toMatchObject({ exceeded: true, retryAfter: 60 });
    expect(r.hit("b", t).exceeded).toBe(false);
    expect(r.hit("a", t + 60_000)).toMatchObject({ exceeded: false, remaining: 1 });
  });
});

describe("routing and validation", () => {
  it("routes every endpoint of the table by method and path", () => {
    for (const name of endpointNames) {
      const def = endpoints[name];
      const path = fillPath(def.path, Object.fromEntries([...def.path.matchAll(/\{(\w+)\}/g)].map((m) => [m[1]!, "x"])));
      expect(matchRoute(def.method, path)).toMatchObject({ kind: "ok", name });
    }
    expect(matchRoute("DELETE", "/vendor3/region")).toEqual({ kind: "method-not-allowed", allow: ["GET"] });
    expect(matchRoute("GET", "/nope")).toEqual({ kind: "not-found" });
  });

  it("describes body problems by field", () => {
    const input = { description: "x".repeat(256) };
    const issues = SecretRequest.safeParse(input).error!.issues.map((i) => describeIssue(i, input));
    expect(issues).toEqual(expect.arrayContaining(["key: is required", "description: too long (max 255)"]));
  });
});

describe("commits", () => {
  it("keeps the newest first, dedupes, pages after startId and filters by id", () => {
    const list: Array<{ git_commit_id: string }> = [];
    for (const id of ["c1", "c2", "c3", "c2"]) addCommit(list, { git_commit_id: id });
    expect(list.map((c) => c.git_commit_id)).toEqual(["c3", "c2", "c1"]);
    expect(selectCommits(list, { startId: "c3" }).map((c) => c.git_commit_id)).toEqual(["c2", "c1"]);
    expect(selectCommits(list, { gitCommitId: "c1" })).toHaveLength(1);
    expect(selectCommits(list, { startId: "unknown" })).toEqual([]);
  });
});

describe("cluster runs", () => {
  const cluster: Cluster = { id: "c", organizationId: "o", name: "prod", region: "eu-west-3", providerKind: "VENDOR2", created_at: "", logs: [] };
  it("puts errors last, ends at the given instant, oldest first", () => {
    const end = Date.parse("2026-01-01T00:00:00Z");
    const logs = generateClusterRun(new Rng("x"), cluster, { endMs: end, entries: 10, errors: 2, kind: "Create" });
    expect(logs.map((l) => l.type).slice(-2)).toEqual(["error", "error"]);
    expect(logs.map((l) => l.step).slice(-2)).toEqual(["CreateError", "GlobalError"]);
    expect(logs.at(-1)!.timestamp!.startsWith("2026-01-01T00:00:00.000")).toBe(true);
    const stamps = logs.map((l) => l.timestamp!);
    expect([...stamps].sort()).toEqual(stamps);
    expect(() => generateClusterRun(new Rng("x"), cluster, { endMs: end, entries: 1, errors: 2 })).toThrow(RangeError);
  });
});

describe("component resolution", () => {
  it("lists missing profile values and constraint violations", () => {
    const r = resolveComponent("c", "cert-manager", { clusterInputs: { replicas: 9, issuer: "nope" } })!;
    expect(r.requirements).toEqual([expect.objectContaining({ key: "dnsProvider", scope: "PLATFORM_PROFILE", status: "MISSING" })]);
    expect(r.violations).toEqual([
      expect.objectContaining({ code: "NOT_ALLOWED", fieldPath: "clusterInputs.issuer" }),
      expect.objectContaining({ code: "OUT_OF_RANGE", fieldPath: "clusterInputs.replicas" }),
    ]);
    expect(resolveComponent("c", "unknown", {})).toBeUndefined();
    const field = { key: "e", type: "string" as const, required: true, label: "E", sensitive: false, constraints: { pattern: "^a" }, defaultValue: null, description: "" };
    expect(check(field, "b", "p")).toEqual([{ code: "PATTERN_MISMATCH", fieldPath: "p", message: "E: must match ^a" }]);
  });
});
