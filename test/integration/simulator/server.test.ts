/**
 * The platform simulator over real HTTP (global fetch, no mocks): auth, errors, every endpoint's
 * success shape, scenarios on the driven clock, fault injection and rate limits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillPath } from "../../../lib/platform/endpoints.js";
import { specEndpointNames as endpointNames, specEndpoints as endpoints, type SpecEndpointName as EndpointName } from "../../../local/simulator/endpoints.js";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

interface CallOptions {
  /** Default: the simulator's API token; null: no Authorization header. */
  token?: string | null;
  scheme?: string;
  body?: unknown;
  rawBody?: string;
  signal?: AbortSignal;
}

async function call(sim: Simulator, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? sim.apiToken : opts.token;
  if (token !== null) headers.Authorization = `${opts.scheme ?? "Token"} ${token}`;
  const body = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${sim.url}${path}`, { method, headers, body, signal: opts.signal });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UNKNOWN_UUID = "0b7e1f4c-1111-4222-8333-944455556666";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 42, size: { organizations: 2 } });
});
afterAll(() => sim.close());

const historyPath = (appId: string, query = "") => `/application/${appId}/deploymentHistoryV2${query}`;

describe("authentication and authorization", () => {
  it("accepts both schemes", async () => {
    const path = `/organization/${sim.ids.organizationId}/project`;
    expect((await call(sim, "GET", path)).status).toBe(200);
    expect((await call(sim, "GET", path, { scheme: "Bearer", token: sim.bearerToken })).status).toBe(200);
    expect(sim.bearerToken.split(".")).toHaveLength(3);
  });

  it("answers 401 without a valid token in either scheme", async () => {
    const path = `/organization/${sim.ids.organizationId}/project`;
    const tampered = sim.bearerToken.slice(0, -3) + (sim.bearerToken.endsWith("AAA") ? "BBB" : "AAA");
    const cases: CallOptions[] = [
      { token: null },
      { token: "not-a-token" },
      { scheme: "Basic", token: sim.apiToken },
      { scheme: "Bearer", token: sim.apiToken },
      { scheme: "Token", token: sim.bearerToken },
      { scheme: "Bearer", token: tampered },
    ];
    for (const c of cases) {
      const r = await call(sim, "GET", path, c);
      expect(r.status, JSON.stringify(c)).toBe(401);
      expect(r.json).toEqual({ status: 401, error: "Unauthorized", message: "Access token is missing or invalid" });
    }
  });

  it("expires bearer tokens on the simulated clock", async () => {
    const s = await startSimulator({ seed: 3 });
    try {
      const short = s.issueBearerToken(60_000);
      const path = "/vendor3/region";
      expect((await call(s, "GET", path, { scheme: "Bearer", token: short })).status).toBe(200);
      s.clock.advance(60_000);
      expect((await call(s, "GET", path, { scheme: "Bearer", token: short })).status).toBe(401);
      expect((await call(s, "GET", path, { scheme: "Bearer", token: s.bearerToken })).status).toBe(200);
      s.clock.advance(3_600_000);
      expect((await call(s, "GET", path, { scheme: "Bearer", token: s.bearerToken })).status).toBe(401);
      expect((await call(s, "GET", path)).status).toBe(200); // API tokens do not expire
    } finally {
      await s.close();
    }
  });

  it("answers 403 to a valid token without access, and lets it read global lists", async () => {
    const forbidden = [
      `/organization/${sim.ids.organizationId}/member`,
      historyPath(sim.ids.applicationIds[0]!),
      `/deploymentStage/${sim.ids.deploymentStageIds[0]}`,
      `/environment/${sim.ids.environmentId}/environmentVariable`,
    ];
    for (const path of forbidden) {
      const r = await call(sim, "GET", path, { token: sim.outsiderToken });
      expect(r.status, path).toBe(403);
      expect(r.json).toEqual({ status: 403, detail: "Access forbidden" });
    }
    const outsiderBearer = sim.issueBearerToken(60_000, "outsider");
    expect((await call(sim, "GET", forbidden[0]!, { scheme: "Bearer", token: outsiderBearer })).status).toBe(403);
    expect((await call(sim, "GET", "/vendor5/availableVersion", { token: sim.outsiderToken })).status).toBe(200);
    const repos = await call(sim, "GET", "/account/vendor4/repository", { token: sim.outsiderToken });
    expect(repos.json.results).toEqual([]);
  });
});

describe("errors", () => {
  it("answers 404 for unknown ids and routes, 405 for a wrong method", async () => {
    const r = await call(sim, "GET", historyPath(UNKNOWN_UUID));
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ status: 404, detail: `Application ${UNKNOWN_UUID} not found` });
    // A job id is not an application id.
    expect((await call(sim, "GET", historyPath(sim.ids.jobIds[0]!))).status).toBe(404);
    expect((await call(sim, "GET", `/organization/${UNKNOWN_UUID}/member`)).status).toBe(404);
    const webhookOfOtherOrg = `/organization/${sim.ids.organizationIds[1]}/webhook/${sim.ids.webhookIds[0]}/event`;
    expect((await call(sim, "GET", webhookOfOtherOrg)).status).toBe(404);
    const route = await call(sim, "GET", "/no/such/route");
    expect(route.status).toBe(404);
    expect(route.json.status).toBe(404);
    const method = await call(sim, "DELETE", "/vendor3/region");
    expect(method.status).toBe(405);
    expect(method.headers.get("allow")).toBe("GET");
    expect(method.json).toMatchObject({ status: 405, error: "Method Not Allowed" });
  });

  it("answers 400 with the field and the reason", async () => {
    const job = `/job/${sim.ids.jobIds[0]}/secret`;
    const restart = `/environment/${sim.ids.environmentId}/service/restart-service`;
    const cases: Array<[string, string, CallOptions, RegExp]> = [
      ["GET", historyPath("not-a-uuid"), {}, /^applicationId: is not a uuid$/],
      ["GET", historyPath(sim.ids.applicationIds[0]!, "?pageSize=0"), {}, /^pageSize: must be at least 1$/],
      ["GET", historyPath(sim.ids.applicationIds[0]!, "?pageSize=abc"), {}, /^pageSize: is not a whole number$/],
      ["POST", job, { body: { value: "v" } }, /^key: is required$/],
      ["POST", job, { body: { key: "" } }, /^key: must not be empty$/],
      ["POST", job, { body: { key: "K", description: "d".repeat(256) } }, /^description: too long \(max 255\)$/],
      ["POST", job, { rawBody: '{"key": "K",' }, /^body: malformed JSON/],
      ["POST", job, {}, /^body: is required$/],
      ["POST", restart, { body: { application_ids: ["nope"] } }, /^application_ids\.0: is not a valid uuid$/],
      ["POST", restart, { body: { database_ids: "x" } }, /^database_ids: must be an array$/],
      ["POST", `/database/${sim.ids.databaseIds[0]}/backup`, { body: { name: "b" } }, /^message: is required$/],
      ["POST", `/organization/${sim.ids.organizationId}/vendor1/credentials`, { body: { name: "n" } }, /vendor1_access_key: is required/],
    ];
    for (const [method, path, opts, message] of cases) {
      const r = await call(sim, method, path, opts);
      expect(r.status, `${method} ${path} ${JSON.stringify(opts)}`).toBe(400);
      expect(r.json).toMatchObject({ status: 400, error: "Bad Request" });
      expect(r.json.message).toMatch(message);
    }
  });
});

// One request per endpoint that must succeed; its body must parse with the endpoint's response schema.
function successCases(s: Simulator): Record<EndpointName, { path: Record<string, string>; query?: string; body?: unknown }> {
  const org = s.ids.organizationId;
  return {
    createJobSecret: { path: { jobId: s.ids.jobIds[0]! }, body: { key: "SCHEMA_CHECK", value: "v" } },
    restartServices: { path: { environmentId: s.ids.environmentId }, body: { application_ids: [s.ids.applicationIds[0]] } },
    resolvePlatformComponent: { path: { organizationId: org, clusterId: s.ids.clusterIds[0]!, componentKey: "cert-manager" }, body: {} },
    editVendor1Credentials: {
      path: { organizationId: org, credentialsId: s.ids.credentialsIds.vendor1[0]! },
      body: { name: "renamed", vendor1_access_key: "AK2", vendor1_secret_key: "SK2", vendor1_project_id: "p", vendor1_organization_id: "o" },
    },
    createVendor1Credentials: {
      path: { organizationId: org },
      body: { name: "new", vendor1_access_key: "AK", vendor1_secret_key: "SK", vendor1_project_id: "p", vendor1_organization_id: "o" },
    },
    createDatabaseBackup: { path: { databaseId: s.ids.databaseIds[0]! }, body: { name: "nightly", message: "before migration" } },
    listWebhookEvents: { path: { organizationId: org, webhookId: s.ids.webhookIds[0]! } },
    listEnvironmentVariables: { path: { environmentId: s.ids.environmentId } },
    listDeploymentHistory: { path: { applicationId: s.ids.applicationIds[0]! }, query: "?pageSize=5&startId=whatever" },
    listClusterLogs: { path: { organizationId: org, clusterId: s.ids.clusterIds[0]! } },
    moveDeploymentStageAfter: { path: { deploymentStageId: s.ids.deploymentStageIds[0]!, stageId: s.ids.deploymentStageIds[1]! } },
    getServiceDeploymentStage: { path: { serviceId: s.ids.databaseIds[0]! } },
    getDeploymentStage: { path: { deploymentStageId: s.ids.deploymentStageIds[0]! } },
    listOrganizationMembers: { path: { organizationId: org } },
    listProjects: { path: { organizationId: org } },
    listApplicationCommits: { path: { applicationId: s.ids.applicationIds[0]! } },
    listVendor3Regions: { path: {} },
    listVendor4Repositories: { path: {} },
    listAvailableHelmRepositories: { path: {} },
    listAvailableIacVersions: { path: {} },
    deleteVendor2Credentials: { path: { organizationId: org, credentialsId: s.ids.credentialsIds.vendor2[0]! } },
  };
}

describe("every endpoint", () => {
  for (const extraFields of [false, true]) {
    it(`answers its success status with a body its schema accepts${extraFields ? " (with extra fields)" : ""}`, async () => {
      const s = await startSimulator({ seed: 11 });
      try {
        s.scenario.setOptions({ extraFields });
        s.scenario.deploy(s.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
        s.clock.advance(200_000);
        const cases = successCases(s);
        expect(Object.keys(cases).sort()).toEqual([...endpointNames].sort());
        for (const name of endpointNames) {
          const def = endpoints[name];
          const c = cases[name];
          const r = await call(s, def.method, fillPath(def.path, c.path) + (c.query ?? ""), { body: c.body });
          expect(r.status, `${name}: ${r.text}`).toBe(def.successStatus);
          if (!def.response) {
            expect(r.text, name).toBe("");
            continue;
          }
          expect(r.headers.get("content-type")).toMatch(/^application\/json/);
          const parsed = def.response.safeParse(r.json);
          expect(parsed.success, `${name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
          if (extraFields) expect(r.json, name).toHaveProperty("x_new_field");
          if (Array.isArray(r.json.results) && r.json.results.length > 0 && extraFields) {
            expect(r.json.results[0], name).toHaveProperty("x_new_field");
          }
        }
        // Lists that must not be empty in a seeded world.
        const nonEmpty: EndpointName[] = ["listWebhookEvents", "listEnvironmentVariables", "listDeploymentHistory", "listClusterLogs", "listOrganizationMembers", "listProjects", "listApplicationCommits"];
        for (const name of nonEmpty) {
          const r = await call(s, "GET", fillPath(endpoints[name].path, cases[name].path));
          expect(r.json.results.length, name).toBeGreaterThan(0);
        }
      } finally {
        await s.close();
      }
    });
  }
});

describe("secrets and variables", () => {
  it("stores a job secret and never returns its value", async () => {
    const value = "super-secret-value-9f8e7d";
    const r = await call(sim, "POST", `/job/${sim.ids.jobIds[0]}/secret`, {
      body: { key: "API_KEY", value, description: "third-party key", mount_path: "/etc/api.key" },
    });
    expect(r.status).toBe(201);
    expect(r.text).not.toContain(value);
    expect(r.json).toMatchObject({ key: "API_KEY", scope: "JOB", variable_type: "FILE", service_id: sim.ids.jobIds[0], service_type: "JOB", description: "third-party key" });
    expect(r.json.id).toMatch(UUID_V4);
    expect(r.json.created_at).toBe(sim.clock.nowIso());
    expect(sim.model.variables.get(r.json.id)?.value).toBe(value);

    const list = await call(sim, "GET", `/environment/${sim.ids.environmentId}/environmentVariable`);
    expect(list.status).toBe(200);
    const secretValues = [...sim.model.variables.values()].filter((v) => v.isSecret).map((v) => v.value);
    expect(secretValues.length).toBeGreaterThanOrEqual(3);
    for (const v of secretValues) expect(list.text).not.toContain(v);
    const mine = list.json.results.find((v: { id: string }) => v.id === r.json.id);
    expect(mine).toMatchObject({ key: "API_KEY", value: null, mount_path: "/etc/api.key", scope: "JOB" });
    const alias = list.json.results.find((v: { variable_type: string }) => v.variable_type === "ALIAS");
    expect(alias.aliased_variable).toMatchObject({ key: "DATABASE_PASSWORD", value: null });
    expect(alias.value).toBeNull();
    const plain = list.json.results.find((v: { key: string; scope: string }) => v.key === "LOG_LEVEL" && v.scope === "ENVIRONMENT");
    expect(plain.value).toBe("info");

    const again = await call(sim, "POST", `/job/${sim.ids.jobIds[0]}/secret`, { body: { key: "API_KEY" } });
    expect(again.status).toBe(400);
  });
});

describe("deployment stages", () => {
  it("moves a stage after another, renumbering the environment's stages", async () => {
    const s = await startSimulator({ seed: 5, size: { organizations: 2 } });
    try {
      const [a, b, c] = s.ids.deploymentStageIds as [string, string, string];
      const r = await call(s, "PUT", `/deploymentStage/${a}/moveAfter/${c}`);
      expect(r.status).toBe(200);
      expect(r.json.results.map((st: { id: string; deployment_order: number }) => [st.id, st.deployment_order])).toEqual([[b, 0], [c, 1], [a, 2]]);
      expect((await call(s, "GET", `/deploymentStage/${a}`)).json.deployment_order).toBe(2);
      const back = await call(s, "PUT", `/deploymentStage/${a}/moveAfter/${b}`);
      expect(back.json.results.map((st: { id: string }) => st.id)).toEqual([b, a, c]);
      // The stage of a service.
      const ofApp = await call(s, "GET", `/service/${s.ids.applicationIds[0]}/deploymentStage`);
      expect(ofApp.json.id).toBe(c);
      expect(ofApp.json.services.map((x: { service_id: string }) => x.service_id)).toEqual(s.ids.applicationIds);
      expect((await call(s, "GET", `/service/${UNKNOWN_UUID}/deploymentStage`)).status).toBe(404);

      expect((await call(s, "PUT", `/deploymentStage/${a}/moveAfter/${a}`)).status).toBe(400);
      expect((await call(s, "PUT", `/deploymentStage/${a}/moveAfter/${UNKNOWN_UUID}`)).status).toBe(404);
      // A stage of another environment.
      const otherEnv = [...s.model.environments.values()].find((e) => e.id !== s.ids.environmentId)!;
      const foreign = { id: UNKNOWN_UUID, environmentId: otherEnv.id, name: "x", description: "", order: 0, created_at: "", updated_at: "", services: [] };
      s.model.environments.set(otherEnv.id, { ...otherEnv, organizationId: s.ids.organizationId });
      s.model.stages.set(foreign.id, foreign);
      const cross = await call(s, "PUT", `/deploymentStage/${a}/moveAfter/${foreign.id}`);
      expect(cross.status).toBe(400);
      expect(cross.json.message).toMatch(/same environment/);
    } finally {
      await s.close();
    }
  });
});

describe("credentials, restarts, backups, components", () => {
  it("creates, edits and deletes credentials without echoing secrets", async () => {
    const org = sim.ids.organizationId;
    const body = { name: "v1", vendor1_access_key: "AKIA-NEW", vendor1_secret_key: "very-secret-key", vendor1_project_id: "p", vendor1_organization_id: "o" };
    const created = await call(sim, "POST", `/organization/${org}/vendor1/credentials`, { body });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: "v1", access_key_id: "AKIA-NEW", object_type: "VENDOR1" });
    expect(created.text).not.toContain("very-secret-key");
    const edited = await call(sim, "PUT", `/organization/${org}/vendor1/credentials/${created.json.id}`, { body: { ...body, name: "v1-renamed" } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ id: created.json.id, name: "v1-renamed" });
    expect((await call(sim, "PUT", `/organization/${org}/vendor1/credentials/${UNKNOWN_UUID}`, { body })).status).toBe(404);
    expect((await call(sim, "PUT", `/organization/${org}/vendor1/credentials/${sim.ids.credentialsIds.vendor2[1]}`, { body })).status).toBe(404);

    const del = `/organization/${org}/vendor2/credentials/${sim.ids.credentialsIds.vendor2[1]}`;
    const first = await call(sim, "DELETE", del);
    expect(first.status).toBe(204);
    expect(first.text).toBe("");
    expect((await call(sim, "DELETE", del)).status).toBe(404);
    expect((await call(sim, "DELETE", `/organization/${org}/vendor2/credentials/${sim.ids.credentialsIds.vendor1[0]}`)).status).toBe(404);
    expect((await call(sim, "DELETE", del, { token: sim.outsiderToken })).status).toBe(403);
  });

  it("restarts selected services and records the restart in the history", async () => {
    const s = await startSimulator({ seed: 8 });
    try {
      const path = `/environment/${s.ids.environmentId}/service/restart-service`;
      const app = s.ids.applicationIds[1]!;
      const r = await call(s, "POST", path, { body: { application_ids: [app], database_ids: [s.ids.databaseIds[0]] } });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ id: s.ids.environmentId, state: "RESTART_QUEUED", status_details: { action: "RESTART", status: "QUEUED" } });
      s.clock.advance(60_000);
      const h = await call(s, "GET", historyPath(app, "?pageSize=1"));
      expect(h.json.results[0]).toMatchObject({ status: "RESTARTED", identifier: { execution_id: r.json.execution_id } });

      expect((await call(s, "POST", path, { body: { application_ids: [UNKNOWN_UUID] } })).status).toBe(404);
      const wrongKind = await call(s, "POST", path, { body: { application_ids: [s.ids.databaseIds[0]] } });
      expect(wrongKind.status).toBe(400);
      expect(wrongKind.json.message).toMatch(/^application_ids: .* is a database, not a application$/);
      expect((await call(s, "POST", path, { body: {} })).status).toBe(400);
    } finally {
      await s.close();
    }
  });

  it("creates backups and resolves platform components", async () => {
    const b = await call(sim, "POST", `/database/${sim.ids.databaseIds[0]}/backup`, { body: { name: "pre-release", message: "manual" } });
    expect(b.status).toBe(201);
    expect(b.json).toMatchObject({ name: "pre-release", message: "manual", status: { state: "EXECUTING" } });
    expect((await call(sim, "POST", `/database/${sim.ids.applicationIds[0]}/backup`, { body: { name: "x", message: "y" } })).status).toBe(404);

    const base = `/organization/${sim.ids.organizationId}/cluster/${sim.ids.clusterIds[0]}/platformBinding/component`;
    const r = await call(sim, "POST", `${base}/cert-manager/resolve`, { body: { profileConfig: { replicas: 0 } } });
    expect(r.status).toBe(200);
    expect(r.json.requirements).toEqual([expect.objectContaining({ key: "dnsProvider", scope: "PLATFORM_PROFILE", status: "MISSING" })]);
    expect(r.json.violations).toEqual([expect.objectContaining({ code: "OUT_OF_RANGE", fieldPath: "profileConfig.replicas" })]);
    const ok = await call(sim, "POST", `${base}/cert-manager/resolve`, { body: { profileConfig: { dnsProvider: "vendor2" } } });
    expect(ok.json.requirements).toEqual([]);
    expect((await call(sim, "POST", `${base}/no-such-component/resolve`, { body: {} })).status).toBe(404);
  });
});

describe("scenarios on the driven clock", () => {
  it("moves one execution QUEUED → BUILDING → DEPLOYING → DEPLOYMENT_ERROR in place", async () => {
    const s = await startSimulator({ seed: 21 });
    try {
      const app = s.ids.applicationIds[0]!;
      const exec = s.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR", commit: { message: "break it", author_name: "Grace Hopper" }, triggeredBy: "grace@example.test", origin: "GIT" });
      const seen: Array<{ status: string; updated: string; duration: string | null }> = [];
      for (const step of [0, 20_000, 60_000, 40_000]) {
        s.clock.advance(step);
        const r = await call(s, "GET", historyPath(app));
        const mine = r.json.results.filter((i: { identifier: { execution_id?: string } }) => i.identifier.execution_id === exec);
        expect(mine).toHaveLength(1);
        expect(r.json.results[0].identifier.execution_id).toBe(exec); // newest first
        seen.push({ status: mine[0].status, updated: mine[0].auditing_data.updated_at, duration: mine[0].total_duration });
      }
      expect(seen.map((x) => x.status)).toEqual(["QUEUED", "BUILDING", "DEPLOYING", "DEPLOYMENT_ERROR"]);
      expect(new Set(seen.map((x) => x.updated)).size).toBe(4);
      expect(seen.map((x) => x.duration)).toEqual([null, null, null, "PT2M0S"]);
      expect(s.scenario.status(exec)).toBe("DEPLOYMENT_ERROR");

      const last = (await call(s, "GET", historyPath(app))).json.results[0];
      expect(last).toMatchObject({
        status_details: { action: "DEPLOY", status: "ERROR", sub_action: "NONE" },
        auditing_data: { triggered_by: "grace@example.test", origin: "GIT", created_at: "2026-01-01T00:00:00.000Z" },
        details: { commit: { message: "break it", author_name: "Grace Hopper" } },
        icon_uri: expect.any(String),
      });
      expect(last.details.build_pod_name).toMatch(/^builder-/);
      // The deployed commit heads the commit list.
      const commits = await call(s, "GET", `/application/${app}/commit`);
      const sha = last.details.commit.git_commit_id;
      expect(commits.json.results[0].git_commit_id).toBe(sha);
      expect((await call(s, "GET", `/application/${app}/commit?gitCommitId=${sha}`)).json.results).toHaveLength(1);
      const after = await call(s, "GET", `/application/${app}/commit?startId=${sha}`);
      expect(after.json.results.length).toBe(commits.json.results.length - 1);
    } finally {
      await s.close();
    }
  });

  it("keeps future deployments invisible, commits optional, legacy entries without execution_id", async () => {
    const s = await startSimulator({ seed: 22 });
    try {
      const app = s.ids.applicationIds[1]!;
      const before = (await call(s, "GET", historyPath(app))).json.results;
      expect(before.some((i: { identifier: object }) => !("execution_id" in i.identifier))).toBe(true);
      s.scenario.deploy(app, { at: "2026-01-01T01:00:00.000Z", commit: null, outcome: "BUILD_ERROR" });
      expect((await call(s, "GET", historyPath(app))).json.results).toHaveLength(before.length);
      s.clock.set("2026-01-01T01:05:00.000Z");
      const now = (await call(s, "GET", historyPath(app))).json.results;
      expect(now).toHaveLength(before.length + 1);
      expect(now[0]).toMatchObject({ status: "BUILD_ERROR", details: { commit: null } });
    } finally {
      await s.close();
    }
  });

  it("pages the history with pageSize (default 20, cap 100), ignoring startId", async () => {
    const s = await startSimulator({ seed: 23, size: { pastDeployments: 0 } });
    try {
      const app = s.ids.applicationIds[0]!;
      for (let i = 0; i < 120; i++) s.scenario.deploy(app, { at: new Date(Date.parse("2026-01-01T00:00:00Z") - (120 - i) * 60_000) });
      const all = await call(s, "GET", historyPath(app));
      expect(all.json).toMatchObject({ page: 1, page_size: 20 });
      expect(all.json.results).toHaveLength(20);
      const created = all.json.results.map((i: { auditing_data: { created_at: string } }) => i.auditing_data.created_at);
      expect([...created].sort().reverse()).toEqual(created);
      expect((await call(s, "GET", historyPath(app, "?pageSize=5"))).json.results).toHaveLength(5);
      const capped = await call(s, "GET", historyPath(app, "?pageSize=500"));
      expect(capped.json.results).toHaveLength(100);
      expect(capped.json.page_size).toBe(100);
      const startId = all.json.results[4].identifier.execution_id;
      expect((await call(s, "GET", historyPath(app, `?startId=${startId}`))).json.results).toEqual(all.json.results);
    } finally {
      await s.close();
    }
  });

  it("records webhook deliveries with the target's answer, immutable, secrets inside", async () => {
    const s = await startSimulator({ seed: 24, size: { webhooks: 2 } });
    try {
      const [w1, w2] = s.ids.webhookIds as [string, string];
      const events = async (w: string) => (await call(s, "GET", `/organization/${s.ids.organizationId}/webhook/${w}/event`)).json.results;
      expect(await events(w1)).toEqual([]);
      s.scenario.setWebhookTarget(w1, { status: 500, body: "boom" });
      s.scenario.setWebhookTarget(w2, { status: 0 });
      const app = s.ids.applicationIds[2]!;
      const exec = s.scenario.deploy(app, { outcome: "DEPLOYMENT_ERROR" });
      const started = await events(w1);
      expect(started).toHaveLength(1);
      s.clock.advance(120_000);
      s.scenario.setWebhookTarget(w1, { status: 200 });
      const sorted = (await events(w1)).sort((a: { created_at: string }, b: { created_at: string }) => a.created_at.localeCompare(b.created_at));
      expect(sorted.map((e: { matched_event: string }) => e.matched_event)).toEqual(["DEPLOYMENT_STARTED", "DEPLOYMENT_FAILURE"]);
      expect(sorted[0]).toEqual(started[0]); // immutable
      for (const e of sorted) {
        expect(e).toMatchObject({ kind: "STANDARD", target_response_status_code: 500, target_response_body: "boom" });
        expect(e.id).toMatch(UUID_V4);
        expect(e.target_url_used).toMatch(/token=/);
      }
      const req = sorted[1].request;
      expect(req).toMatchObject({
        event_type: "DEPLOYMENT_FAILURE",
        payload_type: "DEPLOYMENT",
        payload: {
          current_status: "DEPLOYMENT_ERROR",
          organization: { id: s.ids.organizationId },
          project: { id: s.ids.projectId },
          environment: { id: s.ids.environmentId, type: "PRODUCTION" },
          applications: [{ id: app, execution_id: exec }],
          databases: [], containers: [], jobs: [],
        },
      });
      expect(req.payload.logs.length).toBeGreaterThan(0);
      expect(JSON.stringify(req.headers)).toMatch(/"X-[\w-]+-(Signature|Secret)":"shh-/);
      // The unreachable target: status 0, no body; a later success goes to the new target answer.
      const unreachable = await events(w2);
      expect(unreachable.map((e: { target_response_status_code: number; target_response_body: string | null }) => [e.target_response_status_code, e.target_response_body]))
        .toEqual([[0, null], [0, null]]);
      expect(unreachable[0].target_url_used).toMatch(/^https:\/\/[^:]+:[^@]+@/);
      s.scenario.deploy(app);
      s.clock.advance(120_000);
      const later = (await events(w1)).filter((e: { matched_event: string }) => e.matched_event === "DEPLOYMENT_SUCCESSFUL");
      expect(later).toHaveLength(1);
      expect(later[0].target_response_status_code).toBe(200);
    } finally {
      await s.close();
    }
  });

  it("replaces a cluster's logs with a run of 600 entries and errors", async () => {
    const path = `/organization/${sim.ids.organizationId}/cluster/${sim.ids.clusterIds[0]}/logs`;
    const seeded = (await call(sim, "GET", path)).json.results;
    expect(seeded.every((e: { type: string }) => e.type !== "error")).toBe(true);
    sim.scenario.clusterRun(sim.ids.clusterIds[0]!, { entries: 600, errors: 4, kind: "Delete" });
    const logs = (await call(sim, "GET", path)).json.results;
    expect(logs).toHaveLength(600);
    const stamps = logs.map((e: { timestamp: string }) => e.timestamp);
    for (const t of stamps) expect(t).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    expect([...stamps].sort()).toEqual(stamps);
    const errors = logs.filter((e: { type: string }) => e.type === "error");
    expect(errors).toHaveLength(4);
    expect(errors.map((e: { step: string }) => e.step)).toEqual(["DeleteError", "DeleteError", "DeleteError", "GlobalError"]);
    for (const e of errors) {
      expect(e.error.tag).toMatch(/^[A-Z]+(_[A-Z]+)+$/);
      expect(e).not.toHaveProperty("details");
      expect(e.error.event_details.transmitter.id).toBe(sim.ids.clusterIds[0]);
    }
    expect(errors.some((e: { error: { underlying_error?: unknown } }) => e.error.underlying_error)).toBe(true);
    expect(errors.some((e: { error: { event_details: { underlying_error?: unknown } } }) => e.error.event_details.underlying_error)).toBe(true);
    const others = logs.filter((e: { type: string }) => e.type !== "error");
    for (const e of others) {
      expect(e).not.toHaveProperty("error");
      expect(e.details.region).toBeTruthy();
      expect(e.message.safe_message).toBeTruthy();
      expect(e).not.toHaveProperty("id");
    }
    expect(new Set(others.map((e: { type: string }) => e.type))).toEqual(new Set(["debug", "info", "warning"]));
    expect(new Set(logs.map((e: { details?: { transmitter: { type: string } }; error?: { event_details: { transmitter: { type: string } } } }) =>
      (e.details ?? e.error!.event_details).transmitter.type))).toEqual(new Set(["kubernetes", "Kubernetes"]));
  });

  it("uses unknown enum values for new records when asked", async () => {
    const s = await startSimulator({ seed: 25 });
    try {
      s.scenario.setOptions({ unknownEnums: true });
      const app = s.ids.applicationIds[0]!;
      s.scenario.deploy(app);
      const first = (await call(s, "GET", historyPath(app, "?pageSize=1"))).json.results[0];
      expect(first).toMatchObject({ status: "HIBERNATING", auditing_data: { origin: "AGENTIC" } });
      s.clock.advance(300_000);
      expect((await call(s, "GET", historyPath(app, "?pageSize=1"))).json.results[0].status).toBe("QUANTUM_ERROR");
      const events = (await call(s, "GET", `/organization/${s.ids.organizationId}/webhook/${s.ids.webhookIds[0]}/event`)).json.results;
      expect(events.map((e: { matched_event: string }) => e.matched_event).sort()).toEqual(["DEPLOYMENT_FAILURE", "DEPLOYMENT_HIBERNATED"]);
      s.scenario.clusterRun(s.ids.clusterIds[0]!, { errors: 1 });
      const logs = (await call(s, "GET", `/organization/${s.ids.organizationId}/cluster/${s.ids.clusterIds[0]}/logs`)).json.results;
      expect(logs.at(-1).step).toBe("HibernateError");
      s.scenario.setOptions({ unknownEnums: false });
      s.scenario.deploy(app);
      expect((await call(s, "GET", historyPath(app, "?pageSize=1"))).json.results[0].status).toBe("QUEUED");
    } finally {
      await s.close();
    }
  });

  it("schedules a deterministic day of activity over 500 applications", async () => {
    const make = () => startSimulator({ seed: 9, size: { applications: 500, clusters: 50, webhooks: 20 } });
    const [a, b] = await Promise.all([make(), make()]);
    try {
      const sa = a.scenario.randomActivity({ deploymentsPerHour: 40, failureRate: 0.2, clusterRunsPerHour: 2 });
      const sb = b.scenario.randomActivity({ deploymentsPerHour: 40, failureRate: 0.2, clusterRunsPerHour: 2 });
      expect(sa).toEqual(sb);
      expect(sa.deployments).toBeGreaterThan(700);
      expect(sa.failures / sa.deployments).toBeGreaterThan(0.1);
      a.clock.advance(25 * 3_600_000); // a day, plus time for the last runs to end
      const events = (await call(a, "GET", `/organization/${a.ids.organizationId}/webhook/${a.ids.webhookIds[19]}/event`)).json.results;
      expect(events).toHaveLength(2 * sa.deployments);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe("fault injection", () => {
  const path = () => `/organization/${sim.ids.organizationId}/project`;
  afterAll(() => sim.faults.clear());

  it("answers 429 with Retry-After (seconds or HTTP-date) and extra headers, `times` times", async () => {
    sim.faults.set("listProjects", { status: 429, retryAfter: 7, headers: { "X-Debug": "yes" }, times: 2 });
    const r1 = await call(sim, "GET", path());
    expect(r1.status).toBe(429);
    expect(r1.headers.get("retry-after")).toBe("7");
    expect(r1.headers.get("x-debug")).toBe("yes");
    expect(r1.json).toMatchObject({ status: 429 });
    expect((await call(sim, "GET", path())).status).toBe(429);
    expect((await call(sim, "GET", path())).status).toBe(200);
    const date = "Wed, 21 Oct 2026 07:28:00 GMT";
    sim.faults.set("listProjects", { status: 429, retryAfter: date, times: 1 });
    expect((await call(sim, "GET", path())).headers.get("retry-after")).toBe(date);
  });

  it("answers 5xx, everywhere with '*', endpoint faults first, until cleared", async () => {
    sim.faults.set("*", { status: 503 });
    sim.faults.set("listProjects", { status: 502 });
    expect((await call(sim, "GET", "/vendor3/region")).status).toBe(503);
    expect((await call(sim, "GET", path())).status).toBe(502);
    sim.faults.clear();
    expect((await call(sim, "GET", "/vendor3/region")).status).toBe(200);
    const logged = sim.requestLog.filter((e) => e.fault?.status === 503);
    expect(logged.at(-1)).toMatchObject({ endpoint: "listVendor3Regions", status: 503, tokenKind: "token" });
  });

  it("sends broken or schema-violating 200 bodies", async () => {
    for (const malformed of ["truncated", "not-json", "html"] as const) {
      sim.faults.set("listProjects", { malformed, times: 1 });
      const res = await fetch(`${sim.url}${path()}`, { headers: { Authorization: `Token ${sim.apiToken}` } });
      expect(res.status).toBe(200);
      if (malformed === "html") expect(res.headers.get("content-type")).toMatch(/text\/html/);
      await expect(res.json(), malformed).rejects.toThrow();
    }
    sim.faults.set("listProjects", { body: { results: "not-an-array" }, times: 1 });
    const r = await call(sim, "GET", path());
    expect(r.status).toBe(200);
    expect(endpoints.listProjects.response!.safeParse(r.json).success).toBe(false);
  });

  it("drops the connection and delays answers in wall time", async () => {
    sim.faults.set("listProjects", { drop: true, times: 1 });
    await expect(call(sim, "GET", path())).rejects.toThrow();
    expect(sim.requestLog.at(-1)).toMatchObject({ endpoint: "listProjects", status: 0 });

    sim.faults.set("listProjects", { delayMs: 2000, times: 1 });
    await expect(call(sim, "GET", path(), { signal: AbortSignal.timeout(50) })).rejects.toThrow();
    sim.faults.set("listProjects", { delayMs: 40, times: 1 });
    const t0 = Date.now();
    expect((await call(sim, "GET", path())).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(35);
  });

  it("closes promptly with a delayed request pending", async () => {
    const s = await startSimulator({ seed: 4 });
    s.faults.set("*", { delayMs: 10_000 });
    const pending = call(s, "GET", "/vendor3/region").then(
      () => "answered",
      () => "failed",
    );
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await s.close();
    expect(await pending).toBe("failed");
    // It did not wait for the delayed answer (a behaviour, not a speed: half the delay is the bound).
    expect(Date.now() - t0).toBeLessThan(5_000);
  });
});

describe("rate limits", () => {
  it("sends X-RateLimit-* headers per token and answers 429 once the hour's budget is spent", async () => {
    const s = await startSimulator({ seed: 6, rateLimit: { requestsPerHour: 3 }, startTime: "2026-01-01T10:30:00.000Z" });
    try {
      const reset = String(Date.parse("2026-01-01T11:00:00Z") / 1000);
      for (const remaining of ["2", "1", "0"]) {
        const r = await call(s, "GET", "/vendor3/region");
        expect(r.status).toBe(200);
        expect([r.headers.get("x-ratelimit-limit"), r.headers.get("x-ratelimit-remaining"), r.headers.get("x-ratelimit-reset")]).toEqual(["3", remaining, reset]);
      }
      const limited = await call(s, "GET", "/vendor3/region");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("1800");
      expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
      // Another token has its own budget; no token, no headers.
      expect((await call(s, "GET", "/vendor3/region", { scheme: "Bearer", token: s.bearerToken })).status).toBe(200);
      expect((await call(s, "GET", "/vendor3/region", { token: null })).headers.get("x-ratelimit-limit")).toBeNull();
      s.clock.advance(30 * 60_000);
      expect((await call(s, "GET", "/vendor3/region")).status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it("sends no rate-limit headers when no limit is configured", async () => {
    expect((await call(sim, "GET", "/vendor3/region")).headers.get("x-ratelimit-limit")).toBeNull();
  });
});

describe("determinism and bookkeeping", () => {
  it("gives the same ids and tokens for the same seed, other ids for another", async () => {
    const [a, b, c] = await Promise.all([startSimulator({ seed: 7 }), startSimulator({ seed: 7 }), startSimulator({ seed: 8 })]);
    try {
      expect(a.ids).toEqual(b.ids);
      expect(a.apiToken).toBe(b.apiToken);
      expect(a.bearerToken).toBe(b.bearerToken);
      expect(a.scenario.deploy(a.ids.applicationIds[0]!)).toBe(b.scenario.deploy(b.ids.applicationIds[0]!));
      expect(c.ids.organizationId).not.toBe(a.ids.organizationId);
      expect(c.apiToken).not.toBe(a.apiToken);
      for (const id of [a.ids.organizationId, ...a.ids.applicationIds, ...a.ids.webhookIds, ...a.ids.deploymentStageIds]) expect(id).toMatch(UUID_V4);
      const list = (s: Simulator) => call(s, "GET", `/organization/${s.ids.organizationId}/cluster/${s.ids.clusterIds[0]}/logs`);
      expect((await list(a)).text).toBe((await list(b)).text);
      expect(a.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("logs every request with its endpoint, status, token kind and simulated time", async () => {
    const s = await startSimulator({ seed: 12, startTime: "2026-03-01T00:00:00.000Z" });
    try {
      await call(s, "GET", "/vendor3/region?x=1");
      s.clock.advance(1000);
      await call(s, "GET", "/vendor3/region", { scheme: "Bearer", token: s.bearerToken });
      await call(s, "GET", "/vendor3/region", { token: null });
      await call(s, "GET", "/nowhere");
      expect(s.requestLog).toEqual([
        { method: "GET", path: "/vendor3/region", query: "?x=1", endpoint: "listVendor3Regions", status: 200, tokenKind: "token", at: "2026-03-01T00:00:00.000Z" },
        { method: "GET", path: "/vendor3/region", query: "", endpoint: "listVendor3Regions", status: 200, tokenKind: "bearer", at: "2026-03-01T00:00:01.000Z" },
        { method: "GET", path: "/vendor3/region", query: "", endpoint: "listVendor3Regions", status: 401, tokenKind: "none", at: "2026-03-01T00:00:01.000Z" },
        { method: "GET", path: "/nowhere", query: "", endpoint: null, status: 404, tokenKind: "none", at: "2026-03-01T00:00:01.000Z" },
      ]);
    } finally {
      await s.close();
    }
  });
});
