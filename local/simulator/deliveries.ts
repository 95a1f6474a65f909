/**
 * Webhook delivery records (endpoint 7). A delivery is stored compactly (which run, which moment, what
 * the target answered) and its `request` payload is rendered from the run, which never changes once
 * planned: so records are immutable and 20 webhooks × thousands of runs stay cheap.
 */
import { iso } from "./clock.js";
import type { Delivery, Environment, Organization, Project, Run, Service, ServiceKind } from "./state.js";

export interface DeliveryContext {
  run: Run;
  service: Service;
  environment: Environment;
  project: Project;
  organization: Organization;
  /** The webhook's kind (STANDARD, SLACK). */
  kind: string;
  secretHeader: { name: string; value: string };
}

const LIST_OF_KIND: Record<ServiceKind, "applications" | "jobs" | "databases" | "containers"> = {
  APPLICATION: "applications",
  JOB: "jobs",
  DATABASE: "databases",
  CONTAINER: "containers",
};

/** The JSON payload the platform sent to the target, shaped as docs/platform.md describes. */
export function deliveryRequest(d: Delivery, ctx: DeliveryContext): Record<string, unknown> {
  const { run, service, environment, project, organization } = ctx;
  const phase = d.moment === "start" ? run.phases[0]! : run.phases[run.phases.length - 1]!;
  const lists: Record<string, unknown[]> = { applications: [], databases: [], containers: [], jobs: [] };
  lists[LIST_OF_KIND[service.kind]]!.push({
    id: service.id,
    name: service.name,
    status: phase.status,
    execution_id: run.executionId,
    commit_id: run.commit?.git_commit_id ?? null,
  });
  const failed = d.moment === "end" && phase.status.endsWith("_ERROR");
  return {
    created_at: iso(d.atMs),
    event_type: d.matchedEvent,
    payload_type: "DEPLOYMENT",
    payload_id: run.id,
    // What was sent, secrets included (a shared-secret header, a token in the URL): Lookout must redact.
    url: d.targetUrl,
    headers: { "Content-Type": "application/json", "User-Agent": "platform-webhooks/1.0", [ctx.secretHeader.name]: ctx.secretHeader.value },
    payload: {
      id: environment.id,
      current_status: phase.status,
      desired_status: "RUNNING",
      organization: { id: organization.id, name: organization.name },
      project: { id: project.id, name: project.name },
      environment: { id: environment.id, name: environment.name, type: environment.type },
      ...lists,
      logs: failed ? [{ timestamp: iso(phase.atMs), message: `${service.name}: ${phase.status} (see deployment logs)` }] : [],
    },
  };
}

export function renderDelivery(d: Delivery, ctx: DeliveryContext): Record<string, unknown> {
  return {
    id: d.id,
    created_at: iso(d.atMs),
    kind: ctx.kind,
    matched_event: d.matchedEvent,
    target_url_used: d.targetUrl,
    request: deliveryRequest(d, ctx),
    target_response_status_code: d.status,
    target_response_body: d.body,
  };
}
