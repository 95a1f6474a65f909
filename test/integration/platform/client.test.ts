/**
 * Contract tests: the platform client against the simulator, over real HTTP, for all 21 endpoints —
 * success and each error status — plus retries under injected faults and schema mismatches.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { createPlatformClient, type PlatformClientOptions } from "../../../lib/platform/client.js";
import { specEndpointNames as endpointNames, specEndpoints, type SpecEndpointName as EndpointName } from "../../../local/simulator/endpoints.js";
import {
  PlatformBadRequestError,
  PlatformForbiddenError,
  PlatformNetworkError,
  PlatformNotFoundError,
  PlatformRateLimitedError,
  PlatformRequestInvalidError,
  PlatformSchemaMismatchError,
  PlatformServerError,
  PlatformTimeoutError,
  PlatformUnauthenticatedError,
} from "../../../lib/platform/errors.js";
import type { CallCost } from "../../../lib/platform/cost.js";

let sim: Simulator;
let waits: number[];
const client = (extra: Partial<PlatformClientOptions> = {}) =>
  createPlatformClient({
    baseUrl: sim.url,
    token: sim.apiToken,
    auth: "token",
    sleep: async (ms) => void waits.push(ms),
    ...extra,
  }, specEndpoints);

beforeAll(async () => {
  sim = await startSimulator({ size: { applications: 3 } });
});
afterAll(() => sim.close());
beforeEach(() => {
  waits = [];
  sim.faults.clear();
});

const vendor1Body = () => ({
  name: `creds-${randomUUID().slice(0, 6)}`,
  vendor1_access_key: "AKIA-EXAMPLE",
  vendor1_secret_key: "very-secret-key",
  vendor1_project_id: "proj",
  vendor1_organization_id: "org",
});

/** A valid input for each endpoint, from the seeded ids. `ids` is read lazily, after the simulator starts. */
function validInput(name: EndpointName): any {
  const ids = sim.ids;
  const org = ids.organizationId;
  switch (name) {
    case "createJobSecret": return { path: { jobId: ids.jobIds[0] }, body: { key: "DB_PASSWORD", value: "hunter2-secret", description: "db" } };
    case "restartServices": return { path: { environmentId: ids.environmentId }, body: { application_ids: [ids.applicationIds[0]] } };
    case "resolvePlatformComponent": return { path: { organizationId: org, clusterId: ids.clusterIds[0], componentKey: "ingress-nginx" }, body: { profileConfig: {} } };
    case "editVendor1Credentials": return { path: { organizationId: org, credentialsId: ids.credentialsIds.vendor1[0] }, body: vendor1Body() };
    case "createVendor1Credentials": return { path: { organizationId: org }, body: vendor1Body() };
    case "createDatabaseBackup": return { path: { databaseId: ids.databaseIds[0] }, body: { name: "nightly", message: "before migration" } };
    case "listWebhookEvents": return { path: { organizationId: org, webhookId: ids.webhookIds[0] } };
    case "listEnvironmentVariables": return { path: { environmentId: ids.environmentId } };
    case "listDeploymentHistory": return { path: { applicationId: ids.applicationIds[0] }, query: { pageSize: 5 } };
    case "listClusterLogs": return { path: { organizationId: org, clusterId: ids.clusterIds[0] } };
    case "moveDeploymentStageAfter": return { path: { deploymentStageId: ids.deploymentStageIds[0], stageId: ids.deploymentStageIds[1] } };
    case "getServiceDeploymentStage": return { path: { serviceId: ids.applicationIds[0] } };
    case "getDeploymentStage": return { path: { deploymentStageId: ids.deploymentStageIds[0] } };
    case "listOrganizationMembers": return { path: { organizationId: org } };
    case "listProjects": return { path: { organizationId: org } };
    case "listApplicationCommits": return { path: { applicationId: ids.applicationIds[0] } };
    case "listVendor3Regions":
    case "listVendor4Repositories":
    case "listAvailableHelmRepositories":
    case "listAvailableIacVersions": return {};
    case "deleteVendor2Credentials": return { path: { organizationId: org, credentialsId: ids.credentialsIds.vendor2[0] } };
  }
}

/** The same input with every uuid path parameter replaced by an unknown one. */
function withUnknownIds(name: EndpointName): any {
  const input = validInput(name);
  const path = Object.fromEntries(
    Object.entries(input.path ?? {}).map(([k, v]) => [k, k === "componentKey" ? v : randomUUID()]),
  );
  return { ...input, path };
}

const call = (c: ReturnType<typeof client>, name: EndpointName, input: unknown) => (c.call as any)(name, input);
const withIds = endpointNames.filter((n) => n.startsWith("list") ? !/Vendor3|Vendor4|Helm|Iac/.test(n) : true);

describe("every endpoint answers its success response, parsed", () => {
  // Deletion last: it removes the credentials that other calls do not need.
  it.each(endpointNames)("%s", async (name) => {
    const res = await call(client(), name, validInput(name));
    expect(res.status).toBeGreaterThanOrEqual(200);
    expect(res.status).toBeLessThan(300);
    expect(res.cost).toMatchObject({ endpoint: name, requests: 1, retries: 0 });
    if (name === "deleteVendor2Credentials") expect(res.data).toBeUndefined();
    else expect(res.data).toBeTypeOf("object");
  });
});

describe("what the spec says of particular endpoints", () => {
  it("creates a secret (201) and never returns its value", async () => {
    const c = client();
    const res = await c.createJobSecret({ path: { jobId: sim.ids.jobIds[0]! }, body: { key: "API_TOKEN", value: "do-not-echo-me" } });
    expect(res.status).toBe(201);
    expect(res.data.key).toBe("API_TOKEN");
    expect(res.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(res.data.created_at))).toBe(false);
    expect(JSON.stringify(res.data)).not.toContain("do-not-echo-me");
    const vars = await c.listEnvironmentVariables({ path: { environmentId: sim.ids.environmentId } });
    expect(JSON.stringify(vars.data)).not.toContain("do-not-echo-me");
  });

  it("moveAfter really reorders the stages and returns the resulting list", async () => {
    const c = client();
    const [a, b] = sim.ids.deploymentStageIds as [string, string];
    const res = await c.moveDeploymentStageAfter({ path: { deploymentStageId: a, stageId: b } });
    const order = [...res.data.results].sort((x, y) => (x.deployment_order ?? 0) - (y.deployment_order ?? 0)).map((s) => s.id);
    expect(order.indexOf(a)).toBe(order.indexOf(b) + 1);
    const again = await c.getDeploymentStage({ path: { deploymentStageId: a } });
    expect(again.data.deployment_order).toBe(res.data.results.find((s) => s.id === a)!.deployment_order);
  });

  it("deletes credentials: a second delete is not found", async () => {
    const c = client();
    const created = sim.ids.credentialsIds.vendor2[1] ?? sim.ids.credentialsIds.vendor2[0]!;
    const input = { path: { organizationId: sim.ids.organizationId, credentialsId: created } };
    await c.deleteVendor2Credentials(input).catch(() => undefined);
    await expect(c.deleteVendor2Credentials(input)).rejects.toBeInstanceOf(PlatformNotFoundError);
  });

  it("passes pageSize to the deployment history", async () => {
    for (let i = 0; i < 4; i++) sim.scenario.deploy(sim.ids.applicationIds[1]!);
    sim.clock.advance(60_000);
    const res = await client().listDeploymentHistory({ path: { applicationId: sim.ids.applicationIds[1]! }, query: { pageSize: 2 } });
    expect(res.data.results).toHaveLength(2);
    expect(sim.requestLog.at(-1)!.query).toContain("pageSize=2");
  });

  it("passes startId and gitCommitId to the commit list", async () => {
    await client().listApplicationCommits({ path: { applicationId: sim.ids.applicationIds[0]! }, query: { gitCommitId: "abc", startId: "def" } });
    const path = sim.requestLog.at(-1)!.query;
    expect(path).toContain("gitCommitId=abc");
    expect(path).toContain("startId=def");
  });
});

describe("authentication", () => {
  it.each(endpointNames)("%s: 401 without a valid token", async (name) => {
    const err = await call(client({ token: "not-a-token" }), name, validInput(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformUnauthenticatedError);
    expect(err.status).toBe(401);
    expect(err.cost.requests).toBe(1);
    expect(err.message).not.toContain("not-a-token");
  });

  it("a token rotated in its store: after a 401, reads it again and sends the call once more with the new one", async () => {
    const reads: string[] = [];
    const rotated = client({ token: "rotated-away", renewToken: async () => (reads.push("read"), sim.apiToken) });
    const first = await rotated.listProjects({ path: { organizationId: sim.ids.organizationId } });
    expect(first.status).toBe(200);
    expect(first.cost.requests).toBe(2);
    expect(first.cost.statuses).toEqual([401, 200]);
    // The new token is kept: the next call needs no read.
    const next = await rotated.listProjects({ path: { organizationId: sim.ids.organizationId } });
    expect(next.cost.requests).toBe(1);
    expect(reads).toHaveLength(1);
  });

  it("calls refused together share one read of the store; one refused after another renewed sends again without a read", async () => {
    let reads = 0;
    const rotated = client({
      token: "rotated-away",
      renewToken: async () => (reads++, await new Promise((r) => setTimeout(r, 20)), sim.apiToken),
    });
    // This one is answered (401, with the token it carried) after the others have renewed.
    sim.faults.set("listOrganizationMembers", { delayMs: 300, times: 1 });
    const org = { path: { organizationId: sim.ids.organizationId } };
    const answers = await Promise.all([rotated.listProjects(org), rotated.listProjects(org), rotated.listProjects(org), rotated.listOrganizationMembers(org)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((a) => a.cost.statuses)).toEqual([[401, 200], [401, 200], [401, 200], [401, 200]]);
    expect(reads).toBe(1);
  });

  it("a store that still holds the rejected token, or fails: the 401 stands, after one request and one read", async () => {
    for (const renewToken of [async () => "not-a-token", async () => Promise.reject(new Error("extension down"))]) {
      let reads = 0;
      const err = await client({ token: "not-a-token", renewToken: async () => (reads++, renewToken()) })
        .listProjects({ path: { organizationId: sim.ids.organizationId } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PlatformUnauthenticatedError);
      expect((err as PlatformUnauthenticatedError).cost.requests).toBe(1);
      expect(reads).toBe(1);
    }
  });

  it("accepts the bearer scheme, and refuses an API token sent as a bearer", async () => {
    const ok = await client({ token: sim.bearerToken, auth: "bearer" }).listProjects({ path: { organizationId: sim.ids.organizationId } });
    expect(ok.status).toBe(200);
    await expect(
      client({ token: sim.apiToken, auth: "bearer" }).listProjects({ path: { organizationId: sim.ids.organizationId } }),
    ).rejects.toBeInstanceOf(PlatformUnauthenticatedError);
  });

  it.each(withIds.filter((n) => n !== "deleteVendor2Credentials"))("%s: 403 for a token without access", async (name) => {
    const err = await call(client({ token: sim.outsiderToken }), name, validInput(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformForbiddenError);
    expect(err.status).toBe(403);
  });
});

describe("errors", () => {
  it.each(withIds)("%s: 404 for an unknown id, with the body's detail in the message", async (name) => {
    const err = await call(client(), name, withUnknownIds(name)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformNotFoundError);
    expect(err.status).toBe(404);
    expect(err.detail).toBeTruthy();
    expect(err.message).toContain(err.detail);
    expect(err.cost.requests).toBe(1); // a 404 is never retried
  });

  it("refuses a bad request before sending it, naming the field", async () => {
    const before = sim.requestLog.length;
    const c = client();
    const long = await c.createJobSecret({ path: { jobId: sim.ids.jobIds[0]! }, body: { key: "K", description: "x".repeat(256) } }).catch((e) => e);
    expect(long).toBeInstanceOf(PlatformRequestInvalidError);
    expect(long.field).toBe("body.description");
    const badId = await c.listProjects({ path: { organizationId: "not-a-uuid" } }).catch((e) => e);
    expect(badId).toBeInstanceOf(PlatformRequestInvalidError);
    expect(badId.field).toBe("path.organizationId");
    const size = await c.listDeploymentHistory({ path: { applicationId: sim.ids.applicationIds[0]! }, query: { pageSize: 0 } }).catch((e) => e);
    expect(size.field).toBe("query.pageSize");
    expect(sim.requestLog.length).toBe(before);
  });

  it.each([
    ["a missing key", { path: { jobId: "JOB" }, body: { value: "v" } }],
    ["a description over 255 characters", { path: { jobId: "JOB" }, body: { key: "K", description: "x".repeat(256) } }],
    ["a malformed id", { path: { jobId: "not-a-uuid" }, body: { key: "K" } }],
  ])("the platform answers 400 for %s, read into a typed error", async (_what, input: any) => {
    if (input.path.jobId === "JOB") input.path.jobId = sim.ids.jobIds[0];
    const err = await client({ validateRequests: false }).createJobSecret(input).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformBadRequestError);
    expect(err.status).toBe(400);
    expect(err.detail).toMatch(/Bad Request/);
    expect(err.cost.requests).toBe(1);
  });

  it("rejects non-uuid ids in the restart-service body (400)", async () => {
    const err = await client({ validateRequests: false })
      .restartServices({ path: { environmentId: sim.ids.environmentId }, body: { application_ids: ["nope"] } })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PlatformBadRequestError);
  });
});

describe("retries", () => {
  const projects = (c = client()) => c.listProjects({ path: { organizationId: sim.ids.organizationId } });

  it("waits what Retry-After asks on 429, then succeeds", async () => {
    sim.faults.set("listProjects", { status: 429, retryAfter: 2, times: 2 });
    const res = await projects();
    expect(res.cost).toMatchObject({ requests: 3, retries: 2, statuses: [429, 429, 200] });
    expect(waits).toHaveLength(2);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(2000);
  });

  it("backs off on 429 without Retry-After", async () => {
    sim.faults.set("listProjects", { status: 429, times: 1 });
    const res = await projects();
    expect(res.cost.retries).toBe(1);
    expect(waits[0]).toBeLessThanOrEqual(250);
  });

  it("hands back a 429 whose wait is too long, with the wait", async () => {
    sim.faults.set("listProjects", { status: 429, retryAfter: 3600, times: 1 });
    const err = await projects().catch((e) => e);
    expect(err).toBeInstanceOf(PlatformRateLimitedError);
    expect(err.retryAfterMs).toBe(3_600_000);
    expect(err.cost.requests).toBe(1);
  });

  it("retries 5xx with backoff and gives up after four attempts", async () => {
    sim.faults.set("listProjects", { status: 503, times: 2 });
    expect((await projects()).cost.statuses).toEqual([503, 503, 200]);
    sim.faults.set("listProjects", { status: 500 });
    const err = await projects().catch((e) => e);
    expect(err).toBeInstanceOf(PlatformServerError);
    expect(err.cost).toMatchObject({ requests: 4, retries: 3 });
    expect(waits.slice(-3).every((w, i, a) => i === 0 || w >= 0)).toBe(true);
  });

  it("retries a timeout", async () => {
    sim.faults.set("listProjects", { delayMs: 400, times: 1 });
    const res = await projects(client({ timeoutMs: 100 }));
    expect(res.cost).toMatchObject({ requests: 2, retries: 1, statuses: [0, 200] });
  });

  it("reports a timeout that persists as a timeout", async () => {
    sim.faults.set("listProjects", { delayMs: 300 });
    const err = await projects(client({ timeoutMs: 50, retry: { maxAttempts: 2 } })).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformTimeoutError);
    expect(err.cost.requests).toBe(2);
  });

  it("retries a dropped connection, and reports it as a network error when it persists", async () => {
    sim.faults.set("listProjects", { drop: true, times: 1 });
    expect((await projects()).cost.retries).toBe(1);
    sim.faults.set("listProjects", { drop: true });
    const err = await projects(client({ retry: { maxAttempts: 2 } })).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformNetworkError);
  });

  it("does not resend a POST that may have created something after a 500", async () => {
    sim.faults.set("createJobSecret", { status: 500, times: 1 });
    const err = await client().createJobSecret({ path: { jobId: sim.ids.jobIds[0]! }, body: { key: "K2" } }).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformServerError);
    expect(err.cost.requests).toBe(1);
  });

  it("reports each call's cost, rate-limit headers included", async () => {
    const limited = await startSimulator({ rateLimit: { requestsPerHour: 1000 } });
    try {
      const costs: CallCost[] = [];
      const c = createPlatformClient({ baseUrl: limited.url, token: limited.apiToken, auth: "token", onCost: (cost) => costs.push(cost) });
      await c.listProjects({ path: { organizationId: limited.ids.organizationId } });
      await c.listProjects({ path: { organizationId: randomUUID() } }).catch(() => undefined);
      expect(costs).toHaveLength(2);
      expect(costs[0]!.rateLimit).toMatchObject({ limit: 1000, remaining: 999 });
      expect(costs[0]!.rateLimit!.resetAt).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});

describe("responses that do not match the spec", () => {
  const events = (c = client()) => c.listWebhookEvents({ path: { organizationId: sim.ids.organizationId, webhookId: sim.ids.webhookIds[0]! } });

  it("names the endpoint and the JSON path of the first mismatch", async () => {
    sim.faults.set("listWebhookEvents", { body: { results: [{ id: "ok" }, { id: 5 }] }, times: 1 });
    const err = await events().catch((e) => e);
    expect(err).toBeInstanceOf(PlatformSchemaMismatchError);
    expect(err.jsonPath).toBe("$.results[1].id");
    expect(err.endpoint).toBe("listWebhookEvents");
    expect(err.message).toContain("listWebhookEvents");
    expect(err.message).toContain("$.results[1].id");
  });

  it.each(["truncated", "not-json", "html"] as const)("reports a %s body at $", async (malformed) => {
    sim.faults.set("listWebhookEvents", { malformed, times: 1 });
    const err = await events().catch((e) => e);
    expect(err).toBeInstanceOf(PlatformSchemaMismatchError);
    expect(err.jsonPath).toBe("$");
    expect(err.cost.requests).toBe(1);
  });

  it("reads a list item by item, keeping the valid items beside an invalid one", async () => {
    sim.faults.set("listWebhookEvents", {
      body: { results: [{ id: "a", target_response_status_code: 500 }, { id: 7 }, { id: "c" }] },
      times: 1,
    });
    const res = await client().list("listWebhookEvents", { path: { organizationId: sim.ids.organizationId, webhookId: sim.ids.webhookIds[0]! } });
    expect(res.items.map((i) => i.id)).toEqual(["a", "c"]);
    expect(res.rejected).toMatchObject([{ index: 1, jsonPath: "$.results[1].id" }]);
  });

  it("keeps unknown enum values and extra fields", async () => {
    sim.scenario.setOptions({ unknownEnums: true, extraFields: true });
    try {
      sim.scenario.deploy(sim.ids.applicationIds[2]!, { outcome: "QUANTUM_ERROR" });
      sim.clock.advance(10 * 60_000);
      const res = await client().listDeploymentHistory({ path: { applicationId: sim.ids.applicationIds[2]! } });
      const entry = res.data.results[0]!;
      expect(entry.status).toBe("QUANTUM_ERROR");
      expect(Object.keys(entry).some((k) => !["identifier", "status", "auditing_data", "details", "status_details", "icon_uri", "total_duration"].includes(k))).toBe(true);
    } finally {
      sim.scenario.setOptions({ unknownEnums: false, extraFields: false });
    }
  });
});
