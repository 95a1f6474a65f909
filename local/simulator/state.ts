/**
 * The simulator's in-memory state: plain records plus indexes. Records are stored in the simulator's own
 * shape (times of runs as epoch ms, secrets with their values); `views.ts` turns them into API records.
 */
import type { ClusterLogEntry, Commit } from "../../lib/platform/schemas.js";

export type ServiceKind = "APPLICATION" | "JOB" | "DATABASE" | "CONTAINER";

export interface Organization {
  id: string;
  name: string;
  created_at: string;
}

export interface User {
  id: string;
  email: string;
  name: string;
  nickname: string;
  created_at: string;
  last_activity_at: string;
  /** Role per organization the user belongs to; absent means no access. */
  roles: Map<string, { role: string; roleName: string; roleId: string }>;
}

export interface Project {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

export type EnvironmentType = "PRODUCTION" | "STAGING" | "DEVELOPMENT" | "PREVIEW";

export interface Environment {
  id: string;
  organizationId: string;
  projectId: string;
  name: string;
  type: EnvironmentType;
  clusterId: string | null;
  created_at: string;
}

export interface Service {
  id: string;
  kind: ServiceKind;
  name: string;
  environmentId: string;
  created_at: string;
  updated_at: string;
  /** Applications only: the linked git repository. */
  repository?: { name: string; url: string };
}

export interface StageService {
  id: string;
  serviceId: string;
  created_at: string;
}

export interface Stage {
  id: string;
  environmentId: string;
  name: string;
  description: string;
  /** 0-based position inside the environment. */
  order: number;
  created_at: string;
  updated_at: string;
  services: StageService[];
}

export interface Cluster {
  id: string;
  organizationId: string;
  name: string;
  region: string;
  providerKind: string;
  created_at: string;
  /** The latest run only, oldest first: each run replaces the previous list, as on the platform. */
  logs: ClusterLogEntry[];
}

export interface WebhookTarget {
  /** The status the target answers; 0 or null when it could not be reached. */
  status: number | null;
  body: string | null;
}

export interface Webhook {
  id: string;
  organizationId: string;
  kind: string;
  targetUrl: string;
  /** Sent raw to the target in a header (docs/platform.md): shows up in the recorded request. */
  secretHeader: { name: string; value: string };
  projectNamesFilter: string[];
  environmentTypesFilter: EnvironmentType[];
  created_at: string;
  target: WebhookTarget;
  deliveries: Delivery[];
}

/** One delivery attempt; its `request` is rendered from the run it reports on (see deliveries.ts). */
export interface Delivery {
  id: string;
  webhookId: string;
  runId: string;
  /** Which end of the run it reports. */
  moment: "start" | "end";
  matchedEvent: string;
  atMs: number;
  targetUrl: string;
  status: number | null;
  body: string | null;
}

export interface Credentials {
  id: string;
  organizationId: string;
  vendor: "vendor1" | "vendor2";
  name: string;
  accessKeyId: string;
  /** Stored, never returned. */
  secretKey: string;
  extra: Record<string, string>;
  created_at: string;
  updated_at: string;
}

export interface Variable {
  id: string;
  key: string;
  /** The clear value; never returned for secrets. */
  value: string;
  isSecret: boolean;
  scope: string;
  variableType: string;
  mountPath: string | null;
  description: string | null;
  enableInterpolationInFile: boolean | null;
  /** What the variable belongs to: an environment, a project or a service id. */
  ownerId: string;
  serviceId: string | null;
  /** For ALIAS / OVERRIDE variables: the variable referred to. */
  referenceId: string | null;
  ownedBy: string;
  created_at: string;
  updated_at: string;
}

export interface Backup {
  id: string;
  databaseId: string;
  name: string;
  message: string;
  executionId: string;
  deploymentRequestId: string;
  created_at: string;
}

export interface Phase {
  status: string;
  atMs: number;
  details: { action: string; status: string; sub_action: string };
}

/** One execution of one service (a deployment, a restart): its whole schedule is fixed at creation. */
export interface Run {
  /** Internal id; also the `payload_id` of the webhook deliveries about it. */
  id: string;
  /** Absent on legacy entries (docs/platform.md). */
  executionId: string | null;
  serviceId: string;
  /** Phases in time order; the last one is terminal. */
  phases: Phase[];
  commit: Commit | null;
  triggeredBy: string;
  origin: string;
  buildPodName: string | null;
  /** Whether the run reports to webhooks (seeded history predates the webhooks). */
  notifies: boolean;
  /** Created while `unknownEnums` was on: its deliveries use unknown matched_event values too. */
  unknownEnums: boolean;
}

export class Model {
  readonly organizations = new Map<string, Organization>();
  readonly users = new Map<string, User>();
  readonly projects = new Map<string, Project>();
  readonly environments = new Map<string, Environment>();
  readonly services = new Map<string, Service>();
  readonly stages = new Map<string, Stage>();
  readonly clusters = new Map<string, Cluster>();
  readonly webhooks = new Map<string, Webhook>();
  readonly credentials = new Map<string, Credentials>();
  readonly variables = new Map<string, Variable>();
  readonly backups = new Map<string, Backup>();
  /** Commits per application, newest first. */
  readonly commits = new Map<string, Commit[]>();
  readonly runs = new Map<string, Run>();
  readonly runsByService = new Map<string, Run[]>();
  /** API tokens (`Authorization: Token …`) → user id. */
  readonly apiTokens = new Map<string, string>();

  addRun(run: Run): void {
    this.runs.set(run.id, run);
    const list = this.runsByService.get(run.serviceId);
    if (list) list.push(run);
    else this.runsByService.set(run.serviceId, [run]);
  }

  /** The organization that owns a service, stage, environment, project, cluster or webhook id. */
  organizationOf(kind: "service" | "stage" | "environment", id: string): string | undefined {
    if (kind === "service") {
      const s = this.services.get(id);
      return s && this.environments.get(s.environmentId)?.organizationId;
    }
    if (kind === "stage") {
      const st = this.stages.get(id);
      return st && this.environments.get(st.environmentId)?.organizationId;
    }
    return this.environments.get(id)?.organizationId;
  }

  stagesOf(environmentId: string): Stage[] {
    return [...this.stages.values()].filter((s) => s.environmentId === environmentId).sort((a, b) => a.order - b.order);
  }

  stageOfService(serviceId: string): Stage | undefined {
    for (const st of this.stages.values()) if (st.services.some((s) => s.serviceId === serviceId)) return st;
    return undefined;
  }

  servicesOf(environmentId: string, kind?: ServiceKind): Service[] {
    return [...this.services.values()].filter((s) => s.environmentId === environmentId && (!kind || s.kind === kind));
  }

  canAccess(userId: string, organizationId: string): boolean {
    return this.users.get(userId)?.roles.has(organizationId) ?? false;
  }
}
