/** Model records → API records. Secrets' clear values never leave through here. */
import type { Backup, Credentials, Model, Project, Service, Stage, User, Variable } from "./state.js";

/** The Secret record of endpoint 1 (the spec's Secret has no value field at all). */
export function secretRecord(v: Variable, service: Service): Record<string, unknown> {
  return {
    id: v.id,
    created_at: v.created_at,
    updated_at: v.updated_at,
    key: v.key,
    scope: v.scope,
    variable_type: v.variableType,
    service_id: service.id,
    service_name: service.name,
    service_type: service.kind,
    owned_by: v.ownedBy,
    description: v.description,
    enable_interpolation_in_file: v.enableInterpolationInFile,
  };
}

/** A value as the list shows it: null for secrets. */
const shownValue = (v: Variable): string | null => (v.isSecret ? null : v.value);

export function variableRecord(v: Variable, model: Model): Record<string, unknown> {
  const service = v.serviceId ? model.services.get(v.serviceId) : undefined;
  const ref = v.referenceId ? model.variables.get(v.referenceId) : undefined;
  const reference = ref && {
    id: ref.id, key: ref.key, value: shownValue(ref), mount_path: ref.mountPath, scope: ref.scope, variable_type: ref.variableType,
  };
  // An alias or override of a secret is itself secret.
  const secret = v.isSecret || (v.variableType === "ALIAS" && ref?.isSecret === true);
  return {
    id: v.id,
    created_at: v.created_at,
    updated_at: v.updated_at,
    key: v.key,
    scope: v.scope,
    variable_type: v.variableType,
    value: secret ? null : v.value,
    mount_path: v.mountPath,
    description: v.description ?? "",
    enable_interpolation_in_file: v.enableInterpolationInFile ?? false,
    overridden_variable: v.variableType === "OVERRIDE" ? reference : null,
    aliased_variable: v.variableType === "ALIAS" ? reference : null,
    service_id: service?.id ?? null,
    service_name: service?.name ?? null,
    service_type: service?.kind ?? null,
    owned_by: v.ownedBy,
  };
}

export function stageRecord(stage: Stage, model: Model): Record<string, unknown> {
  return {
    id: stage.id,
    created_at: stage.created_at,
    updated_at: stage.updated_at,
    environment: { id: stage.environmentId },
    name: stage.name,
    description: stage.description,
    deployment_order: stage.order,
    services: stage.services.map((s) => ({
      id: s.id,
      created_at: s.created_at,
      updated_at: s.created_at,
      service_id: s.serviceId,
      service_type: model.services.get(s.serviceId)?.kind ?? "APPLICATION",
      is_skipped: false,
    })),
  };
}

export function memberRecord(user: User, organizationId: string): Record<string, unknown> {
  const role = user.roles.get(organizationId)!;
  return {
    id: user.id,
    created_at: user.created_at,
    updated_at: user.last_activity_at,
    email: user.email,
    name: user.name,
    nickname: user.nickname,
    profile_picture_url: `https://avatars.platform.example/${user.nickname}.png`,
    last_activity_at: user.last_activity_at,
    role: role.role,
    role_name: role.roleName,
    role_id: role.roleId,
  };
}

export function projectRecord(p: Project, model: Model): Record<string, unknown> {
  const envCount = [...model.environments.values()].filter((e) => e.projectId === p.id).length;
  return {
    id: p.id,
    created_at: p.created_at,
    updated_at: p.updated_at,
    name: p.name,
    associated_environments_count: envCount,
    organization: { id: p.organizationId },
    description: p.description,
  };
}

/** The secret key is stored, never echoed. */
export function credentialsRecord(c: Credentials): Record<string, unknown> {
  return { id: c.id, name: c.name, access_key_id: c.accessKeyId, object_type: c.vendor.toUpperCase() };
}

export interface StatusInput {
  id: string;
  state: string;
  details: { action: string; status: string; sub_action: string };
  executionId: string;
  deploymentRequestId: string;
  atIso: string;
  stepName: string;
}

/** The service status object (endpoint 2, and `status` of a backup). */
export function serviceStatus(s: StatusInput): Record<string, unknown> {
  return {
    id: s.id,
    state: s.state,
    service_deployment_status: "UP_TO_DATE",
    is_part_last_deployment: true,
    status_details: s.details,
    deployment_request_id: s.deploymentRequestId,
    deployment_requests_count: 1,
    last_deployment_date: s.atIso,
    steps: {
      total_duration_sec: 0,
      total_computing_duration_sec: 0,
      details: [{ step_name: s.stepName, status: "ONGOING", duration_sec: 0, started_at: s.atIso }],
    },
    execution_id: s.executionId,
  };
}

export function backupRecord(b: Backup): Record<string, unknown> {
  return {
    id: b.id,
    created_at: b.created_at,
    name: b.name,
    message: b.message,
    updated_at: b.created_at,
    status: serviceStatus({
      id: b.id, state: "EXECUTING", details: { action: "DEPLOY", status: "EXECUTING", sub_action: "NONE" },
      executionId: b.executionId, deploymentRequestId: b.deploymentRequestId, atIso: b.created_at, stepName: "BACKUP",
    }),
  };
}
