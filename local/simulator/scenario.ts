/**
 * The scenario engine: what happens on the platform over simulated time. Runs (deployments, restarts)
 * are planned up front; the actions due when they start or end (recording a commit, webhook deliveries)
 * fire as the clock reaches them. Nothing uses timers or wall time.
 */
import { STATUS_CODES } from "node:http";
import type { ClusterLogEntry, Commit } from "../../lib/platform/schemas.js";
import { type SimClock } from "./clock.js";
import { generateClusterRun, type ClusterRunOptions } from "./cluster-log-runs.js";
import { addCommit, makeCommit } from "./commits.js";
import type { RandomSource } from "./ids.js";
import type { Model, Run, Service, Webhook, WebhookTarget } from "./state.js";
import { matchedEvent, planDeployment, planRestart, runEnd, runStart, runStateAt, type PhaseDurations } from "./runs.js";
import { Schedule } from "./schedule.js";

export interface ScenarioOptions {
  /** New records use values outside the spec's enums (HIBERNATING, QUANTUM_ERROR, AGENTIC, HibernateError, DEPLOYMENT_HIBERNATED). */
  unknownEnums: boolean;
  /** Responses carry fields the spec does not list (`x_new_field`). */
  extraFields: boolean;
}

export interface DeployOptions {
  /** Terminal state (default DEPLOYED, or QUANTUM_ERROR with unknownEnums): BUILD_ERROR, DEPLOYMENT_ERROR, CANCELED or any string. */
  outcome?: string;
  /** When the run starts (default now); a future start stays invisible until the clock gets there. */
  at?: string | Date;
  durations?: PhaseDurations;
  /** The deployed commit: fields to use (the rest is generated), or null for none. */
  commit?: Partial<Commit> | null;
  /** Default: the member user's e-mail. */
  triggeredBy?: string;
  /** GIT, CONSOLE, API, CLI or anything else (default CONSOLE, or AGENTIC with unknownEnums). */
  origin?: string;
}

export interface ActivityOptions {
  /** Start of the period (default now). */
  from?: string | Date;
  /** Length of the period in simulated ms (default one day). */
  durationMs?: number;
  /** Mean rate of deployments over all the applications (Poisson arrivals; default 20). */
  deploymentsPerHour?: number;
  /** Share of deployments ending in DEPLOYMENT_ERROR or BUILD_ERROR (default 0.1). */
  failureRate?: number;
  /** Share of deployments ending CANCELED (default 0.02). */
  cancelRate?: number;
  /** Applications to deploy (default all the seeded ones). */
  applicationIds?: string[];
  /** Mean rate of cluster runs over all clusters (default 0). */
  clusterRunsPerHour?: number;
  /** Share of cluster runs that log errors (default 0.3). */
  clusterErrorRate?: number;
}

export interface ActivitySummary {
  deployments: number;
  failures: number;
  cancellations: number;
  clusterRuns: number;
  executionIds: string[];
  /** End of the period, ISO. */
  until: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function defaultResponseBody(status: number | null): string | null {
  if (!status) return null;
  return status >= 200 && status < 300 ? "ok" : (STATUS_CODES[status] ?? "error");
}

export class Scenario {
  private readonly schedule = new Schedule();
  private opts: ScenarioOptions = { unknownEnums: false, extraFields: false };

  constructor(
    private readonly model: Model,
    private readonly clock: SimClock,
    private readonly random: RandomSource,
    /** Who deploys by default. */
    private readonly defaultActor: string,
  ) {
    clock.onChange(() => this.sync());
  }

  get options(): Readonly<ScenarioOptions> {
    return this.opts;
  }

  setOptions(options: Partial<ScenarioOptions>): void {
    this.opts = { ...this.opts, ...options };
  }

  /** Starts (or schedules) a deployment of a service; returns its execution id. */
  deploy(serviceId: string, opts: DeployOptions = {}): string {
    const service = this.service(serviceId);
    const rng = this.random.stream("deploy");
    const startMs = opts.at === undefined ? this.clock.nowMs() : toMs(opts.at);
    const unknownEnums = this.opts.unknownEnums;
    const phases = planDeployment({ startMs, outcome: opts.outcome ?? (unknownEnums ? "QUANTUM_ERROR" : "DEPLOYED"), durations: opts.durations, unknownEnums });
    const executionId = this.random.uuid("execution");
    const builds = service.kind === "APPLICATION" || service.kind === "JOB";
    const commit =
      opts.commit === null || (!builds && opts.commit === undefined)
        ? null
        : makeCommit(rng, service, startMs - rng.int(2, 120) * 60_000, opts.commit ?? {});
    this.addRun({
      id: this.random.uuid("deployment-request"),
      executionId,
      serviceId,
      phases,
      commit,
      triggeredBy: opts.triggeredBy ?? this.defaultActor,
      origin: opts.origin ?? (unknownEnums ? "AGENTIC" : "CONSOLE"),
      buildPodName: builds ? `builder-${service.name}-${executionId.slice(0, 8)}-${rng.hex(5)}` : null,
      notifies: true,
      unknownEnums,
    });
    return executionId;
  }

  /**
   * Pushes `count` commits to an application's repository now, without deploying them (endpoint 16 lists
   * them); returns them newest first.
   */
  pushCommits(applicationId: string, count: number, given: Partial<Commit> = {}): Commit[] {
    const app = this.service(applicationId);
    if (app.kind !== "APPLICATION") throw new Error(`${applicationId} is not an application: it has no commits`);
    const rng = this.random.stream("push");
    const now = this.clock.nowMs();
    const pushed = Array.from({ length: count }, (_, i) => addCommit(this.commitsOf(app.id), makeCommit(rng, app, now - (count - i) * 1000, given)));
    return pushed.reverse();
  }

  /** Restarts services now, as endpoint 2 does: one execution, one run per service. */
  restart(serviceIds: string[], triggeredBy: string): { executionId: string; runs: Run[] } {
    const executionId = this.random.uuid("execution");
    const runs = serviceIds.map((serviceId) => {
      const previous = this.model.runsByService.get(serviceId)?.at(-1);
      const run: Run = {
        id: this.random.uuid("deployment-request"), executionId, serviceId, phases: planRestart(this.clock.nowMs()),
        commit: previous?.commit ?? null, triggeredBy, origin: "API", buildPodName: null, notifies: true,
        unknownEnums: this.opts.unknownEnums,
      };
      this.addRun(run);
      return run;
    });
    return { executionId, runs };
  }

  /** The status of an execution now (its first run's), or undefined if unknown or not started. */
  status(executionId: string): string | undefined {
    for (const run of this.model.runs.values()) {
      if (run.executionId === executionId) return runStateAt(run, this.clock.nowMs())?.phase.status;
    }
    return undefined;
  }

  /**
   * Replaces a cluster's log list with a new run (at `opts.at`, default now; a future run replaces the
   * list when the clock reaches it). Returns the entries of the run.
   */
  clusterRun(clusterId: string, opts: ClusterRunOptions = {}): ClusterLogEntry[] {
    const cluster = this.model.clusters.get(clusterId);
    if (!cluster) throw new Error(`unknown cluster ${clusterId}`);
    const endMs = opts.at === undefined ? this.clock.nowMs() : toMs(opts.at);
    const entries = generateClusterRun(this.random.stream("cluster-logs"), cluster, { ...opts, endMs, unknownEnums: this.opts.unknownEnums });
    this.at(endMs, () => {
      cluster.logs = entries;
    });
    return entries;
  }

  /** How a webhook's target answers from now on: status 0 or null means unreachable. */
  setWebhookTarget(webhookId: string, target: { status: number | null; body?: string | null }): void {
    const webhook = this.model.webhooks.get(webhookId);
    if (!webhook) throw new Error(`unknown webhook ${webhookId}`);
    webhook.target = { status: target.status, body: target.body === undefined ? defaultResponseBody(target.status) : target.body };
  }

  /** Schedules realistic, deterministic activity over a period: deployments of many apps, cluster runs. */
  randomActivity(opts: ActivityOptions = {}): ActivitySummary {
    const rng = this.random.stream("activity");
    const fromMs = opts.from === undefined ? this.clock.nowMs() : toMs(opts.from);
    const untilMs = fromMs + (opts.durationMs ?? DAY);
    const failureRate = opts.failureRate ?? 0.1;
    const cancelRate = opts.cancelRate ?? 0.02;
    const apps = opts.applicationIds ?? [...this.model.services.values()].filter((s) => s.kind === "APPLICATION").map((s) => s.id);
    const summary: ActivitySummary = { deployments: 0, failures: 0, cancellations: 0, clusterRuns: 0, executionIds: [], until: new Date(untilMs).toISOString() };

    const perHour = opts.deploymentsPerHour ?? 20;
    if (apps.length > 0 && perHour > 0) {
      for (let t = fromMs + rng.exponential(HOUR / perHour); t < untilMs; t += rng.exponential(HOUR / perHour)) {
        const r = rng.next();
        const outcome = r < failureRate ? rng.pick(["DEPLOYMENT_ERROR", "DEPLOYMENT_ERROR", "BUILD_ERROR"]) : r < failureRate + cancelRate ? "CANCELED" : "DEPLOYED";
        summary.executionIds.push(
          this.deploy(rng.pick(apps), {
            at: new Date(Math.floor(t)),
            outcome,
            origin: rng.pick(["GIT", "GIT", "GIT", "CONSOLE", "API", "CLI"]),
            durations: { queuedMs: rng.int(2, 60) * 1000, buildingMs: rng.int(30, 300) * 1000, deployingMs: rng.int(20, 180) * 1000 },
          }),
        );
        summary.deployments++;
        if (outcome === "CANCELED") summary.cancellations++;
        else if (outcome !== "DEPLOYED") summary.failures++;
      }
    }

    const clusters = [...this.model.clusters.keys()];
    const runsPerHour = opts.clusterRunsPerHour ?? 0;
    if (clusters.length > 0 && runsPerHour > 0) {
      for (let t = fromMs + rng.exponential(HOUR / runsPerHour); t < untilMs; t += rng.exponential(HOUR / runsPerHour)) {
        const errors = rng.chance(opts.clusterErrorRate ?? 0.3) ? rng.int(1, 3) : 0;
        this.clusterRun(rng.pick(clusters), { at: new Date(Math.floor(t)), entries: rng.int(10, 60), errors });
        summary.clusterRuns++;
      }
    }
    return summary;
  }

  /** Seeds past deployments of every application (before the webhooks existed: no deliveries). */
  seedHistory(perApplication: number): void {
    const rng = this.random.stream("history");
    const now = this.clock.nowMs();
    const apps = [...this.model.services.values()].filter((s) => s.kind === "APPLICATION");
    apps.forEach((app, i) => {
      const commits = this.commitsOf(app.id);
      for (let j = perApplication - 1; j >= 0; j--) {
        const startMs = now - (j + 1) * 20 * DAY - i * 60_000;
        const commit = addCommit(commits, makeCommit(rng, app, startMs - 30 * 60_000));
        const legacy = now - startMs > 30 * DAY; // old entries have no execution_id (docs/platform.md)
        this.model.addRun({
          id: this.random.uuid("deployment-request"),
          executionId: legacy ? null : this.random.uuid("execution"),
          serviceId: app.id,
          phases: planDeployment({ startMs, outcome: "DEPLOYED", durations: { queuedMs: 5_000, buildingMs: 120_000, deployingMs: 60_000 } }),
          commit,
          triggeredBy: commit.author_name ?? this.defaultActor,
          origin: "GIT",
          buildPodName: `builder-${app.name}-${rng.hex(8)}`,
          notifies: false,
          unknownEnums: false,
        });
      }
      addCommit(commits, makeCommit(rng, app, now - HOUR)); // pushed, not deployed yet
    });
  }

  /** Fires everything due at the current simulated instant. */
  sync(): void {
    this.schedule.runDue(this.clock.nowMs());
  }

  private at(atMs: number, fire: () => void): void {
    this.schedule.add(atMs, fire);
    this.sync();
  }

  private addRun(run: Run): void {
    this.model.addRun(run);
    this.at(runStart(run), () => {
      if (run.commit) {
        const service = this.service(run.serviceId);
        if (service.kind === "APPLICATION") run.commit = addCommit(this.commitsOf(service.id), run.commit);
      }
      this.deliver(run, "start");
    });
    this.at(runEnd(run), () => this.deliver(run, "end"));
  }

  /** Records one delivery per webhook of the organization whose filters match. */
  private deliver(run: Run, moment: "start" | "end"): void {
    if (!run.notifies) return;
    const service = this.service(run.serviceId);
    const env = this.model.environments.get(service.environmentId)!;
    const project = this.model.projects.get(env.projectId)!;
    const atMs = moment === "start" ? runStart(run) : runEnd(run);
    for (const webhook of this.model.webhooks.values()) {
      if (webhook.organizationId !== env.organizationId || !matchesFilters(webhook, project.name, env.type)) continue;
      webhook.deliveries.push({
        id: this.random.uuid("delivery"),
        webhookId: webhook.id,
        runId: run.id,
        moment,
        matchedEvent: matchedEvent(run, moment),
        atMs,
        targetUrl: webhook.targetUrl,
        ...copyTarget(webhook.target),
      });
    }
  }

  private service(id: string): Service {
    const s = this.model.services.get(id);
    if (!s) throw new Error(`unknown service ${id}`);
    return s;
  }

  private commitsOf(appId: string): Commit[] {
    let list = this.model.commits.get(appId);
    if (!list) this.model.commits.set(appId, (list = []));
    return list;
  }
}

const copyTarget = (t: WebhookTarget) => ({ status: t.status, body: t.body });

function matchesFilters(w: Webhook, projectName: string, envType: string): boolean {
  return (
    (w.projectNamesFilter.length === 0 || w.projectNamesFilter.includes(projectName)) &&
    (w.environmentTypesFilter.length === 0 || (w.environmentTypesFilter as string[]).includes(envType))
  );
}

function toMs(at: string | Date): number {
  const ms = typeof at === "string" ? Date.parse(at) : at.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`not a date-time: ${String(at)}`);
  return ms;
}
