/**
 * The 21 endpoint handlers. Each gets checked path parameters, query and body (see validate.ts) and
 * returns the success body; failures are thrown as HttpError. The mapped type below makes the compiler
 * insist on one handler per endpoint of the table.
 */
import type * as z from "zod/mini";
import type { PathParamNames } from "../../lib/platform/endpoints.js";
import type { SpecEndpointName as EndpointName, SpecEndpoints as Endpoints } from "./endpoints.js";
import type { Principal } from "./auth.js";
import type { SimClock } from "./clock.js";
import { selectCommits } from "./commits.js";
import { renderDelivery, type DeliveryContext } from "./deliveries.js";
import { badRequest, forbidden, notFound } from "./error-responses.js";
import type { RandomSource } from "./ids.js";
import type { Environment, Model, Service, ServiceKind, Stage, User } from "./state.js";
import { HELM_REPOSITORIES, IAC_VERSIONS, VENDOR3_REGIONS, vendor4Repositories } from "./reference.js";
import { resolveComponent } from "./resolve.js";
import { historyItem, runStart } from "./runs.js";
import type { Scenario } from "./scenario.js";
import {
  backupRecord,
  credentialsRecord,
  memberRecord,
  projectRecord,
  secretRecord,
  serviceStatus,
  stageRecord,
  variableRecord,
} from "./views.js";

export interface SimState {
  model: Model;
  clock: SimClock;
  scenario: Scenario;
  random: RandomSource;
}

type Def<K extends EndpointName> = Endpoints[K];
type BodyOf<K extends EndpointName> = Def<K> extends { body?: infer B } ? (B extends z.ZodMiniType ? z.infer<B> : undefined) : undefined;
type QueryOf<K extends EndpointName> = Def<K> extends { query?: infer Q } ? { [P in keyof Q]?: string } : Record<string, never>;

export interface Request<K extends EndpointName> {
  params: Record<PathParamNames<Def<K>["path"]>, string>;
  query: QueryOf<K>;
  body: BodyOf<K>;
  principal: Principal;
  sim: SimState;
}

export type Handler<K extends EndpointName> = (req: Request<K>) => unknown;

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

// ---- access checks: 404 for what does not exist, then 403 for what the caller may not see ----------

function userOf(req: Request<EndpointName>): User {
  return req.sim.model.users.get(req.principal.userId)!;
}

function requireOrganization(req: Request<EndpointName>, organizationId: string): void {
  if (!req.sim.model.organizations.has(organizationId)) throw notFound("Organization", organizationId);
  if (!req.sim.model.canAccess(req.principal.userId, organizationId)) throw forbidden();
}

const KIND_LABEL: Record<ServiceKind, string> = { APPLICATION: "Application", JOB: "Job", DATABASE: "Database", CONTAINER: "Container" };

function requireService(req: Request<EndpointName>, id: string, kind?: ServiceKind): Service {
  const { model } = req.sim;
  const s = model.services.get(id);
  if (!s || (kind && s.kind !== kind)) throw notFound(kind ? KIND_LABEL[kind] : "Service", id);
  requireOrganization(req, model.organizationOf("service", id)!);
  return s;
}

function requireEnvironment(req: Request<EndpointName>, id: string): Environment {
  const env = req.sim.model.environments.get(id);
  if (!env) throw notFound("Environment", id);
  requireOrganization(req, env.organizationId);
  return env;
}

function requireStage(req: Request<EndpointName>, id: string): Stage {
  const stage = req.sim.model.stages.get(id);
  if (!stage) throw notFound("Deployment stage", id);
  requireOrganization(req, req.sim.model.organizationOf("stage", id)!);
  return stage;
}

function requireInOrganization<T extends { organizationId: string }>(item: T | undefined, organizationId: string, what: string, id: string): T {
  if (!item || item.organizationId !== organizationId) throw notFound(what, id);
  return item;
}

// ---- handlers -----------------------------------------------------------------------------------

export const handlers: { [K in EndpointName]: Handler<K> } = {
  createJobSecret(req) {
    const job = requireService(req, req.params.jobId, "JOB");
    const { model, clock } = req.sim;
    const b = req.body;
    if ([...model.variables.values()].some((v) => v.ownerId === job.id && v.key === b.key)) {
      throw badRequest(`key: a variable ${b.key} already exists on job ${job.id}`);
    }
    const now = clock.nowIso();
    const secret = {
      id: req.sim.random.uuid("variable"),
      key: b.key,
      value: b.value ?? "",
      isSecret: true,
      scope: "JOB",
      variableType: b.mount_path ? "FILE" : "VALUE",
      mountPath: b.mount_path ?? null,
      description: b.description ?? null,
      enableInterpolationInFile: b.enable_interpolation_in_file ?? null,
      ownerId: job.id,
      serviceId: job.id,
      referenceId: null,
      ownedBy: "PLATFORM",
      created_at: now,
      updated_at: now,
    };
    model.variables.set(secret.id, secret);
    return secretRecord(secret, job);
  },

  restartServices(req) {
    const env = requireEnvironment(req, req.params.environmentId);
    const { model, clock, scenario, random } = req.sim;
    const selections: Array<[keyof typeof req.body, ServiceKind]> = [
      ["application_ids", "APPLICATION"], ["database_ids", "DATABASE"], ["container_ids", "CONTAINER"],
    ];
    const ids: string[] = [];
    for (const [field, kind] of selections) {
      for (const id of req.body[field] ?? []) {
        const s = model.services.get(id);
        if (!s) throw notFound(KIND_LABEL[kind], id);
        if (s.environmentId !== env.id) throw badRequest(`${field}: ${id} is not a service of environment ${env.id}`);
        if (s.kind !== kind) throw badRequest(`${field}: ${id} is a ${s.kind.toLowerCase()}, not a ${kind.toLowerCase()}`);
        ids.push(id);
      }
    }
    if (ids.length === 0) throw badRequest("body: select at least one service in application_ids, database_ids or container_ids");
    const { executionId } = scenario.restart(ids, userOf(req).email);
    return serviceStatus({
      id: env.id, state: "RESTART_QUEUED", details: { action: "RESTART", status: "QUEUED", sub_action: "NONE" },
      executionId, deploymentRequestId: random.uuid("deployment-request"), atIso: clock.nowIso(), stepName: "RESTART",
    });
  },

  resolvePlatformComponent(req) {
    const { organizationId, clusterId, componentKey } = req.params;
    requireOrganization(req, organizationId);
    requireInOrganization(req.sim.model.clusters.get(clusterId), organizationId, "Cluster", clusterId);
    const resolution = resolveComponent(clusterId, componentKey, req.body);
    if (!resolution) throw notFound("Platform component", componentKey);
    return resolution;
  },

  editVendor1Credentials(req) {
    const { organizationId, credentialsId } = req.params;
    requireOrganization(req, organizationId);
    const c = req.sim.model.credentials.get(credentialsId);
    if (!c || c.organizationId !== organizationId || c.vendor !== "vendor1") throw notFound("Credentials", credentialsId);
    Object.assign(c, {
      name: req.body.name,
      accessKeyId: req.body.vendor1_access_key,
      secretKey: req.body.vendor1_secret_key,
      extra: { project_id: req.body.vendor1_project_id, organization_id: req.body.vendor1_organization_id },
      updated_at: req.sim.clock.nowIso(),
    });
    return credentialsRecord(c);
  },

  createVendor1Credentials(req) {
    const { organizationId } = req.params;
    requireOrganization(req, organizationId);
    const now = req.sim.clock.nowIso();
    const c = {
      id: req.sim.random.uuid("credentials"), organizationId, vendor: "vendor1" as const, name: req.body.name,
      accessKeyId: req.body.vendor1_access_key, secretKey: req.body.vendor1_secret_key,
      extra: { project_id: req.body.vendor1_project_id, organization_id: req.body.vendor1_organization_id },
      created_at: now, updated_at: now,
    };
    req.sim.model.credentials.set(c.id, c);
    return credentialsRecord(c);
  },

  createDatabaseBackup(req) {
    const db = requireService(req, req.params.databaseId, "DATABASE");
    const { random, clock, model } = req.sim;
    const backup = {
      id: random.uuid("backup"), databaseId: db.id, name: req.body.name, message: req.body.message,
      executionId: random.uuid("execution"), deploymentRequestId: random.uuid("deployment-request"), created_at: clock.nowIso(),
    };
    model.backups.set(backup.id, backup);
    return backupRecord(backup);
  },

  listWebhookEvents(req) {
    const { organizationId, webhookId } = req.params;
    requireOrganization(req, organizationId);
    const { model, random } = req.sim;
    const webhook = requireInOrganization(model.webhooks.get(webhookId), organizationId, "Webhook", webhookId);
    const contexts = new Map<string, DeliveryContext>();
    const contextOf = (runId: string): DeliveryContext => {
      let ctx = contexts.get(runId);
      if (!ctx) {
        const run = model.runs.get(runId)!;
        const service = model.services.get(run.serviceId)!;
        const environment = model.environments.get(service.environmentId)!;
        const project = model.projects.get(environment.projectId)!;
        const organization = model.organizations.get(environment.organizationId)!;
        ctx = { run, service, environment, project, organization, kind: webhook.kind, secretHeader: webhook.secretHeader };
        contexts.set(runId, ctx);
      }
      return ctx;
    };
    // The platform promises no order: answer in a (seeded) shuffled one, so clients must sort.
    const results = random.stream("event-order").shuffle(webhook.deliveries).map((d) => renderDelivery(d, contextOf(d.runId)));
    return { results };
  },

  listEnvironmentVariables(req) {
    const env = requireEnvironment(req, req.params.environmentId);
    const { model } = req.sim;
    const owned = (ownerId: string) => ownerId === env.id || ownerId === env.projectId || model.services.get(ownerId)?.environmentId === env.id;
    return { results: [...model.variables.values()].filter((v) => owned(v.ownerId)).map((v) => variableRecord(v, model)) };
  },

  listDeploymentHistory(req) {
    const app = requireService(req, req.params.applicationId, "APPLICATION");
    let pageSize = DEFAULT_PAGE_SIZE;
    if (req.query.pageSize !== undefined) {
      pageSize = Number(req.query.pageSize);
      if (pageSize < 1) throw badRequest("pageSize: must be at least 1");
      pageSize = Math.min(pageSize, MAX_PAGE_SIZE);
    }
    // startId is accepted and ignored: it does not page on the real service (docs/platform.md).
    const now = req.sim.clock.nowMs();
    const runs = (req.sim.model.runsByService.get(app.id) ?? []).filter((r) => runStart(r) <= now);
    const results = runs
      .sort((a, b) => runStart(b) - runStart(a))
      .slice(0, pageSize)
      .map((r) => historyItem(r, app, now)!);
    return { page: 1, page_size: pageSize, results };
  },

  listClusterLogs(req) {
    const { organizationId, clusterId } = req.params;
    requireOrganization(req, organizationId);
    return { results: requireInOrganization(req.sim.model.clusters.get(clusterId), organizationId, "Cluster", clusterId).logs };
  },

  moveDeploymentStageAfter(req) {
    const stage = requireStage(req, req.params.deploymentStageId);
    const after = requireStage(req, req.params.stageId);
    if (stage.id === after.id) throw badRequest("stageId: a stage cannot be moved after itself");
    if (stage.environmentId !== after.environmentId) throw badRequest("stageId: both stages must belong to the same environment");
    const { model, clock } = req.sim;
    const order = model.stagesOf(stage.environmentId).filter((s) => s.id !== stage.id);
    order.splice(order.indexOf(after) + 1, 0, stage);
    const now = clock.nowIso();
    order.forEach((s, i) => {
      if (s.order !== i) Object.assign(s, { order: i, updated_at: now });
    });
    return { results: order.map((s) => stageRecord(s, model)) };
  },

  getServiceDeploymentStage(req) {
    const service = requireService(req, req.params.serviceId);
    const stage = req.sim.model.stageOfService(service.id);
    if (!stage) throw notFound(`Deployment stage of service ${service.id}`);
    return stageRecord(stage, req.sim.model);
  },

  getDeploymentStage(req) {
    return stageRecord(requireStage(req, req.params.deploymentStageId), req.sim.model);
  },

  listOrganizationMembers(req) {
    const { organizationId } = req.params;
    requireOrganization(req, organizationId);
    const members = [...req.sim.model.users.values()].filter((u) => u.roles.has(organizationId));
    return { results: members.map((u) => memberRecord(u, organizationId)) };
  },

  listProjects(req) {
    const { organizationId } = req.params;
    requireOrganization(req, organizationId);
    const { model } = req.sim;
    return { results: [...model.projects.values()].filter((p) => p.organizationId === organizationId).map((p) => projectRecord(p, model)) };
  },

  listApplicationCommits(req) {
    const app = requireService(req, req.params.applicationId, "APPLICATION");
    return { results: selectCommits(req.sim.model.commits.get(app.id) ?? [], req.query) };
  },

  listVendor3Regions: () => ({ results: VENDOR3_REGIONS }),

  listVendor4Repositories(req) {
    const { model } = req.sim;
    // The account's repositories: those of the applications the caller can see.
    const visible = (serviceId: string) => model.canAccess(req.principal.userId, model.organizationOf("service", serviceId) ?? "");
    return { results: vendor4Repositories(model, visible) };
  },

  listAvailableHelmRepositories: () => ({ results: HELM_REPOSITORIES }),

  listAvailableIacVersions: () => ({ results: IAC_VERSIONS }),

  deleteVendor2Credentials(req) {
    const { organizationId, credentialsId } = req.params;
    requireOrganization(req, organizationId);
    const c = req.sim.model.credentials.get(credentialsId);
    if (!c || c.organizationId !== organizationId || c.vendor !== "vendor2") throw notFound("Credentials", credentialsId);
    req.sim.model.credentials.delete(credentialsId);
    return undefined;
  },
};
