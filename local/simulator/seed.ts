/**
 * The seeded world: organizations, users and their tokens, one project and environment with services,
 * deployment stages, clusters, webhooks, credentials and variables. Everything comes from the seed.
 */
import { derivedSecret } from "./auth.js";
import { iso } from "./clock.js";
import { generateClusterRun } from "./cluster-log-runs.js";
import type { RandomSource } from "./ids.js";
import { Model, type Cluster, type Service, type ServiceKind, type Variable } from "./state.js";

export interface SimulatorSize {
  organizations?: number;
  applications?: number;
  clusters?: number;
  webhooks?: number;
  jobs?: number;
  databases?: number;
  containers?: number;
  /** Past deployments per application already in the history at start (default 2; those older than 30 days are legacy, without execution_id). */
  pastDeployments?: number;
}

export const DEFAULT_SIZE: Required<SimulatorSize> = {
  organizations: 1, applications: 3, clusters: 1, webhooks: 1, jobs: 1, databases: 1, containers: 1, pastDeployments: 2,
};

export interface SeededIds {
  /** The organization everything below lives in. */
  organizationId: string;
  /** All seeded organizations the member user belongs to (the first is `organizationId`). */
  organizationIds: string[];
  projectId: string;
  environmentId: string;
  applicationIds: string[];
  jobIds: string[];
  databaseIds: string[];
  containerIds: string[];
  clusterIds: string[];
  webhookIds: string[];
  /** In deployment order. */
  deploymentStageIds: string[];
  credentialsIds: { vendor1: string[]; vendor2: string[] };
  /** The member user (ADMIN) the API and bearer tokens belong to. */
  userId: string;
  /** The user of `outsiderToken` and its own organization. */
  outsiderUserId: string;
  outsiderOrganizationId: string;
}

export interface Seeded {
  model: Model;
  ids: SeededIds;
  apiToken: string;
  outsiderToken: string;
}

const NAMES: Record<ServiceKind, string[]> = {
  APPLICATION: ["api-gateway", "web-frontend", "billing", "checkout", "search", "notifications", "catalogue", "accounts"],
  JOB: ["nightly-report", "db-migrate", "cache-warmer"],
  DATABASE: ["orders-db", "users-db", "analytics-db"],
  CONTAINER: ["redis-proxy", "metrics-agent", "nginx-edge"],
};
const REGIONS = ["eu-west-3", "us-east-2", "ap-southeast-1", "eu-central-1"];

/** `name`, then `name-2`, `name-3`… once the pool is used up. */
const nameFor = (pool: string[], i: number) => pool[i % pool.length]! + (i >= pool.length ? `-${Math.floor(i / pool.length) + 1}` : "");
const envKey = (name: string) => name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");

export function seedWorld(random: RandomSource, startMs: number, sizeIn: SimulatorSize = {}): Seeded {
  const size = { ...DEFAULT_SIZE, ...sizeIn };
  for (const [k, v] of Object.entries(size)) {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`size.${k} must be an integer >= 0, got ${v}`);
  }
  if (size.organizations < 1) throw new RangeError("size.organizations must be >= 1");
  const model = new Model();
  const rng = random.stream("seed");
  const created = iso(startMs - 90 * 86_400_000); // the world predates the start by 90 days
  const now = iso(startMs);
  const uuid = (kind: string) => random.uuid(kind);

  // Organizations, each with one project and one environment; the first holds the services.
  const organizationIds: string[] = [];
  const environments: string[] = [];
  const projects: string[] = [];
  for (let i = 0; i < size.organizations; i++) {
    const orgId = uuid("organization");
    organizationIds.push(orgId);
    model.organizations.set(orgId, { id: orgId, name: i === 0 ? "Acme" : `Acme ${i + 1}`, created_at: created });
    const projectId = uuid("project");
    projects.push(projectId);
    model.projects.set(projectId, {
      id: projectId, organizationId: orgId, name: i === 0 ? "shop" : `shop-${i + 1}`,
      description: "The online shop and its back office", created_at: created, updated_at: now,
    });
    const envId = uuid("environment");
    environments.push(envId);
    model.environments.set(envId, {
      id: envId, organizationId: orgId, projectId, name: i === 0 ? "production" : "staging",
      type: i === 0 ? "PRODUCTION" : "STAGING", clusterId: null, created_at: created,
    });
  }
  const organizationId = organizationIds[0]!;
  const environmentId = environments[0]!;
  const projectId = projects[0]!;

  // Users: the member (ADMIN everywhere), two colleagues, and an outsider with an organization of its own.
  const role = (r: string) => ({ role: r, roleName: r.charAt(0) + r.slice(1).toLowerCase(), roleId: uuid(`role:${r}`) });
  const addUser = (email: string, name: string, orgs: string[], r: string) => {
    const id = uuid("user");
    model.users.set(id, {
      id, email, name, nickname: email.split("@")[0]!, created_at: created, last_activity_at: now,
      roles: new Map(orgs.map((o) => [o, role(r)])),
    });
    return id;
  };
  const userId = addUser("ada@example.test", "Ada Lovelace", organizationIds, "ADMIN");
  addUser("grace@example.test", "Grace Hopper", [organizationId], "DEVELOPER");
  addUser("linus@example.test", "Linus Torvalds", [organizationId], "VIEWER");
  const outsiderOrganizationId = uuid("organization:outsider");
  model.organizations.set(outsiderOrganizationId, { id: outsiderOrganizationId, name: "Elsewhere Inc", created_at: created });
  const outsiderUserId = addUser("mallory@elsewhere.test", "Mallory", [outsiderOrganizationId], "ADMIN");
  const apiToken = `sim_${derivedSecret(random.seed, "api-token:member")}`;
  const outsiderToken = `sim_${derivedSecret(random.seed, "api-token:outsider")}`;
  model.apiTokens.set(apiToken, userId);
  model.apiTokens.set(outsiderToken, outsiderUserId);

  // Clusters, with the log list of their last (successful) run.
  const clusterIds: string[] = [];
  for (let i = 0; i < size.clusters; i++) {
    const id = uuid("cluster");
    clusterIds.push(id);
    const cluster: Cluster = {
      id, organizationId, name: `${i === 0 ? "production" : "cluster"}-${i + 1}`, region: REGIONS[i % REGIONS.length]!,
      providerKind: "VENDOR2", created_at: created, logs: [],
    };
    cluster.logs = generateClusterRun(random.stream("cluster-logs"), cluster, { endMs: startMs - 3_600_000, entries: 12 });
    model.clusters.set(id, cluster);
  }
  const primaryEnv = model.environments.get(environmentId)!;
  primaryEnv.clusterId = clusterIds[0] ?? null;

  // Services of the primary environment.
  const addServices = (kind: ServiceKind, count: number): string[] =>
    Array.from({ length: count }, (_, i) => {
      const id = uuid(kind.toLowerCase());
      const name = nameFor(NAMES[kind], i);
      const service: Service = { id, kind, name, environmentId, created_at: created, updated_at: now };
      if (kind === "APPLICATION") service.repository = { name: `acme/${name}`, url: `https://vendor4.example/acme/${name}` };
      model.services.set(id, service);
      return id;
    });
  const databaseIds = addServices("DATABASE", size.databases);
  const jobIds = addServices("JOB", size.jobs);
  const containerIds = addServices("CONTAINER", size.containers);
  const applicationIds = addServices("APPLICATION", size.applications);

  // Deployment stages: databases first, then jobs and containers, then applications.
  const stageGroups: Array<[string, string, string[]]> = [
    ["databases", "Stateful services, deployed first", databaseIds],
    ["backends", "Jobs and containers", [...jobIds, ...containerIds]],
    ["applications", "Applications, deployed last", applicationIds],
  ];
  const deploymentStageIds = stageGroups.map(([name, description, members], order) => {
    const id = uuid("stage");
    model.stages.set(id, {
      id, environmentId, name, description, order, created_at: created, updated_at: created,
      services: members.map((serviceId) => ({ id: uuid("stage-service"), serviceId, created_at: created })),
    });
    return id;
  });

  // Webhooks: targets carry secrets in their URLs and a raw shared secret header (docs/platform.md).
  const webhookIds: string[] = [];
  for (let i = 0; i < size.webhooks; i++) {
    const id = uuid("webhook");
    webhookIds.push(id);
    const targetUrl = i % 2 === 0
      ? `https://hooks.example.test/platform/${i + 1}?token=tok_${rng.hex(24)}`
      : `https://lookout:pw-${rng.hex(12)}@alerts.example.test/hook/${i + 1}?access_token=${rng.hex(24)}`;
    model.webhooks.set(id, {
      id, organizationId, kind: "STANDARD", targetUrl,
      secretHeader: { name: i % 2 === 0 ? "X-Lookout-Signature" : "X-Webhook-Secret", value: `shh-${rng.hex(32)}` },
      projectNamesFilter: [], environmentTypesFilter: [], created_at: now, target: { status: 200, body: "ok" }, deliveries: [],
    });
  }

  // Credentials.
  const addCredentials = (vendor: "vendor1" | "vendor2", name: string) => {
    const id = uuid("credentials");
    model.credentials.set(id, {
      id, organizationId, vendor, name, accessKeyId: `${vendor === "vendor1" ? "V1" : "V2"}AK${rng.hex(16).toUpperCase()}`,
      secretKey: rng.hex(40), extra: {}, created_at: created, updated_at: created,
    });
    return id;
  };
  const credentialsIds = {
    vendor1: [addCredentials("vendor1", "vendor1-main")],
    vendor2: [addCredentials("vendor2", "vendor2-production"), addCredentials("vendor2", "vendor2-sandbox")],
  };

  // Variables at each scope, with secrets whose values must never come back.
  const addVar = (v: Partial<Variable> & Pick<Variable, "key" | "value" | "scope" | "ownerId">): Variable => {
    const variable: Variable = {
      id: uuid("variable"), isSecret: false, variableType: "VALUE", mountPath: null, description: null,
      enableInterpolationInFile: null, serviceId: null, referenceId: null, ownedBy: "PLATFORM", created_at: created, updated_at: created,
      ...v,
    };
    model.variables.set(variable.id, variable);
    return variable;
  };
  addVar({ key: "PLATFORM_ENVIRONMENT_ID", value: environmentId, scope: "BUILT_IN", variableType: "BUILT_IN", ownerId: environmentId });
  addVar({ key: "PLATFORM_PROJECT_ID", value: projectId, scope: "BUILT_IN", variableType: "BUILT_IN", ownerId: environmentId });
  addVar({ key: "DEFAULT_REGION", value: REGIONS[0]!, scope: "PROJECT", ownerId: projectId });
  const logLevel = addVar({ key: "LOG_LEVEL", value: "info", scope: "ENVIRONMENT", ownerId: environmentId, description: "Log verbosity" });
  const dbPassword = addVar({ key: "DATABASE_PASSWORD", value: `pg-${rng.hex(24)}`, isSecret: true, scope: "ENVIRONMENT", ownerId: environmentId });
  for (const id of databaseIds) {
    const s = model.services.get(id)!;
    addVar({ key: `PLATFORM_DATABASE_${envKey(s.name)}_HOST`, value: `${s.name}.internal`, scope: "BUILT_IN", variableType: "BUILT_IN", ownerId: id, serviceId: id });
  }
  for (const id of jobIds) addVar({ key: "JOB_API_KEY", value: `key-${rng.hex(24)}`, isSecret: true, scope: "JOB", ownerId: id, serviceId: id });
  applicationIds.forEach((id, i) => {
    addVar({ key: "PORT", value: "8080", scope: "APPLICATION", ownerId: id, serviceId: id });
    if (i === 0) {
      addVar({ key: "DB_PASSWORD", value: "", scope: "APPLICATION", variableType: "ALIAS", ownerId: id, serviceId: id, referenceId: dbPassword.id });
      addVar({ key: "LOG_LEVEL", value: "debug", scope: "APPLICATION", variableType: "OVERRIDE", ownerId: id, serviceId: id, referenceId: logLevel.id });
    }
  });

  return {
    model,
    apiToken,
    outsiderToken,
    ids: {
      organizationId, organizationIds, projectId, environmentId, applicationIds, jobIds, databaseIds, containerIds,
      clusterIds, webhookIds, deploymentStageIds, credentialsIds, userId, outsiderUserId, outsiderOrganizationId,
    },
  };
}
