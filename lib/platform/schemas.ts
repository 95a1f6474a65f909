/**
 * Every record of the platform's API as a zod/mini schema. The schemas follow the platform's published
 * API spec; where the service differs from it, they follow the service (docs/platform.md).
 *
 * Conventions:
 * - Field names, nullability and the 255-character description limit follow the spec.
 * - Response records are `looseObject`s: fields the spec does not list are kept, not dropped
 *   (the platform adds fields over time and the audit trail keeps what was read).
 * - Where the spec does not mark response fields required ("not shown"), they are optional;
 *   the service leaves some out (docs/platform.md).
 * - Enum fields are open: a value the spec does not list is kept as a string (see `openEnum`).
 * - Request bodies are strict about what the spec requires, so bad input fails before it is sent.
 */
import * as z from "zod/mini";

/** An enum that keeps unknown values: typed with the known ones, accepting any string at run time. */
export function openEnum<const T extends readonly string[]>(_known: T) {
  return z.string() as unknown as z.ZodMiniType<T[number] | (string & {})>;
}

const opt = z.optional;
/** Optional and nullable. */
const optNull = <T extends z.ZodMiniType>(t: T) => z.optional(z.nullable(t));
const str = () => z.string();
/** Ids and timestamps in responses are strings; their format is not policed on read (lenient). */
const id = str;
const dateTime = str;
const description = () => z.string().check(z.maxLength(255));

// ---- Enumerations -------------------------------------------------------------------------------

export const VARIABLE_SCOPES = [
  "APPLICATION", "BUILT_IN", "ENVIRONMENT", "PROJECT", "CONTAINER", "JOB", "HELM", "VENDOR5", "AGENTIC_WORKFLOW",
] as const;
export const VARIABLE_TYPES = [
  "VALUE", "ALIAS", "OVERRIDE", "BUILT_IN", "FILE", "EXTERNAL_SECRET", "FILE_EXTERNAL_SECRET",
] as const;
export const LINKED_SERVICE_TYPES = ["APPLICATION", "CONTAINER", "DATABASE", "JOB", "HELM", "VENDOR5"] as const;
export const SERVICE_STATES = [
  "BUILDING", "BUILD_ERROR", "CANCELED", "CANCELING", "DELETED", "DELETE_ERROR", "DELETE_QUEUED", "DELETING",
  "DEPLOYED", "DEPLOYING", "DEPLOYMENT_ERROR", "DEPLOYMENT_QUEUED", "EXECUTING", "QUEUED", "READY", "RECAP",
  "RESTARTED", "RESTARTING", "RESTART_ERROR", "RESTART_QUEUED", "STOPPED", "STOPPING", "STOP_ERROR", "STOP_QUEUED",
  "UNAVAILABLE", "WAITING_DELETING", "WAITING_RESTARTING", "WAITING_RUNNING", "WAITING_STOPPING",
] as const;
export const SERVICE_DEPLOYMENT_STATUSES = ["NEVER_DEPLOYED", "OUT_OF_DATE", "UP_TO_DATE"] as const;
/** status_details values, as the service sends them (docs/platform.md). */
export const STATUS_DETAIL_ACTIONS = ["DEPLOY", "DELETE", "RESTART", "STOP", "UNKNOWN"] as const;
export const STATUS_DETAIL_STATUSES = [
  "QUEUED", "ONGOING", "SUCCESS", "ERROR", "EXECUTING", "CANCELED", "CANCELING", "NEVER",
] as const;
export const DEPLOYMENT_ORIGINS = ["API", "CLI", "CONSOLE", "GIT"] as const;
export const WEBHOOK_KINDS = ["STANDARD", "SLACK"] as const;
export const WEBHOOK_MATCHED_EVENTS = [
  "DEPLOYMENT_STARTED", "DEPLOYMENT_CANCELLED", "DEPLOYMENT_FAILURE", "DEPLOYMENT_SUCCESSFUL",
] as const;
export const CLUSTER_LOG_TYPES = ["debug", "info", "warning", "error"] as const;
export const DEPLOYMENT_HISTORY_FILTERS = ["FAILED", "SUCCESS"] as const;

/** A service's state as the platform names it (not Lookout's ServiceState, lib/model/transitions.ts). */
export type PlatformServiceState = (typeof SERVICE_STATES)[number] | (string & {});

// ---- Base, secrets, variables -------------------------------------------------------------------

const baseFields = { id: id(), created_at: dateTime(), updated_at: opt(dateTime()) };

const secretReferenceFields = {
  id: id(),
  key: str(),
  mount_path: str(),
  scope: openEnum(VARIABLE_SCOPES),
  variable_type: openEnum(VARIABLE_TYPES),
  description: optNull(description()),
  enable_interpolation_in_file: optNull(z.boolean()),
};
export const SecretOverride = z.looseObject(secretReferenceFields);
export const SecretAlias = z.looseObject(secretReferenceFields);

export const Secret = z.looseObject({
  ...baseFields,
  key: str(),
  scope: openEnum(VARIABLE_SCOPES),
  overridden_secret: opt(SecretOverride),
  aliased_secret: opt(SecretAlias),
  variable_type: opt(openEnum(VARIABLE_TYPES)),
  service_id: opt(id()),
  service_name: opt(str()),
  service_type: opt(openEnum(LINKED_SERVICE_TYPES)),
  owned_by: opt(str()),
  description: optNull(description()),
  enable_interpolation_in_file: optNull(z.boolean()),
});
export type Secret = z.infer<typeof Secret>;

export const SecretRequest = z.object({
  key: z.string().check(z.minLength(1)),
  value: opt(str()),
  mount_path: optNull(str()),
  description: optNull(description()),
  enable_interpolation_in_file: optNull(z.boolean()),
});
export type SecretRequest = z.infer<typeof SecretRequest>;

const variableReference = z.looseObject({
  id: opt(id()),
  key: opt(str()),
  value: optNull(str()),
  mount_path: optNull(str()),
  scope: opt(openEnum(VARIABLE_SCOPES)),
  variable_type: opt(openEnum(VARIABLE_TYPES)),
});

export const EnvironmentVariable = z.looseObject({
  id: opt(id()),
  created_at: opt(dateTime()),
  updated_at: optNull(dateTime()),
  key: opt(str()),
  scope: opt(openEnum(VARIABLE_SCOPES)),
  variable_type: opt(openEnum(VARIABLE_TYPES)),
  value: optNull(str()),
  mount_path: optNull(str()),
  description: optNull(str()),
  enable_interpolation_in_file: optNull(z.boolean()),
  overridden_variable: optNull(variableReference),
  aliased_variable: optNull(variableReference),
  service_id: optNull(id()),
  service_name: optNull(str()),
  service_type: optNull(openEnum(LINKED_SERVICE_TYPES)),
  owned_by: optNull(str()),
});
export type EnvironmentVariable = z.infer<typeof EnvironmentVariable>;

// ---- Service status, backups --------------------------------------------------------------------

export const StatusDetails = z.looseObject({
  action: opt(openEnum(STATUS_DETAIL_ACTIONS)),
  status: opt(openEnum(STATUS_DETAIL_STATUSES)),
  sub_action: opt(str()),
});
export type StatusDetails = z.infer<typeof StatusDetails>;

export const DeploymentStep = z.looseObject({
  step_name: opt(str()),
  status: opt(str()),
  duration_sec: opt(z.int()),
  started_at: optNull(dateTime()),
});

export const ServiceStatus = z.looseObject({
  id: opt(id()),
  state: opt(openEnum(SERVICE_STATES)),
  service_deployment_status: opt(openEnum(SERVICE_DEPLOYMENT_STATUSES)),
  is_part_last_deployment: opt(z.boolean()),
  status_details: optNull(StatusDetails),
  deployment_request_id: optNull(id()),
  deployment_requests_count: opt(z.int()),
  last_deployment_date: optNull(dateTime()),
  steps: optNull(
    z.looseObject({
      total_duration_sec: opt(z.int()),
      total_computing_duration_sec: opt(z.int()),
      details: opt(z.array(DeploymentStep)),
    }),
  ),
  execution_id: optNull(str()),
});
export type ServiceStatus = z.infer<typeof ServiceStatus>;

export const Backup = z.looseObject({
  id: opt(id()),
  created_at: opt(dateTime()),
  name: opt(str()),
  message: opt(str()),
  updated_at: optNull(dateTime()),
  status: opt(ServiceStatus),
});
export type Backup = z.infer<typeof Backup>;

export const BackupRequest = z.object({ name: z.string().check(z.minLength(1)), message: str() });
export type BackupRequest = z.infer<typeof BackupRequest>;

export const RestartServicesRequest = z.object({
  application_ids: opt(z.array(z.guid())),
  database_ids: opt(z.array(z.guid())),
  container_ids: opt(z.array(z.guid())),
});
export type RestartServicesRequest = z.infer<typeof RestartServicesRequest>;

// ---- Webhook deliveries -------------------------------------------------------------------------

export const WebhookEvent = z.looseObject({
  id: id(),
  created_at: opt(dateTime()),
  kind: opt(openEnum(WEBHOOK_KINDS)),
  matched_event: opt(openEnum(WEBHOOK_MATCHED_EVENTS)),
  target_url_used: optNull(str()),
  request: optNull(z.record(z.string(), z.unknown())),
  target_response_status_code: optNull(z.int()),
  target_response_body: optNull(str()),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

// ---- Deployment history and commits -------------------------------------------------------------

export const Commit = z.looseObject({
  created_at: optNull(dateTime()),
  git_commit_id: opt(str()),
  tag: optNull(str()),
  message: optNull(str()),
  author_name: optNull(str()),
  author_avatar_url: optNull(str()),
  commit_page_url: optNull(str()),
});
export type Commit = z.infer<typeof Commit>;

export const DeploymentHistoryItem = z.looseObject({
  identifier: z.looseObject({
    name: opt(str()),
    service_id: opt(id()),
    service_type: opt(openEnum(LINKED_SERVICE_TYPES)),
    /** Missing on old entries (docs/platform.md). */
    execution_id: optNull(str()),
  }),
  status: opt(openEnum(SERVICE_STATES)),
  auditing_data: optNull(
    z.looseObject({
      created_at: optNull(dateTime()),
      updated_at: optNull(dateTime()),
      triggered_by: optNull(str()),
      origin: optNull(openEnum(DEPLOYMENT_ORIGINS)),
    }),
  ),
  details: optNull(z.looseObject({ commit: optNull(Commit), build_pod_name: optNull(str()) })),
  status_details: optNull(StatusDetails),
  icon_uri: optNull(str()),
  /** ISO 8601 duration, e.g. PT8M42S. */
  total_duration: optNull(str()),
});
export type DeploymentHistoryItem = z.infer<typeof DeploymentHistoryItem>;

// ---- Cluster logs -------------------------------------------------------------------------------

const underlyingError = z.looseObject({ message: optNull(str()) });

export const EventDetails = z.looseObject({
  provider_kind: optNull(str()),
  region: optNull(str()),
  transmitter: optNull(z.looseObject({ type: optNull(str()), id: optNull(str()), name: optNull(str()) })),
  /** Seen here as well as inside `error` (docs/platform.md). */
  underlying_error: optNull(underlyingError),
});

export const ClusterLogEntry = z.looseObject({
  type: opt(openEnum(CLUSTER_LOG_TYPES)),
  timestamp: opt(dateTime()),
  step: opt(str()),
  message: optNull(z.looseObject({ safe_message: optNull(str()) })),
  error: optNull(
    z.looseObject({
      tag: optNull(str()),
      user_log_message: optNull(str()),
      link: optNull(str()),
      hint_message: optNull(str()),
      event_details: optNull(EventDetails),
      underlying_error: optNull(underlyingError),
    }),
  ),
  details: optNull(EventDetails),
});
export type ClusterLogEntry = z.infer<typeof ClusterLogEntry>;

// ---- Deployment stages --------------------------------------------------------------------------

export const StageService = z.looseObject({
  id: opt(id()),
  created_at: opt(dateTime()),
  updated_at: optNull(dateTime()),
  service_id: opt(id()),
  service_type: opt(openEnum(LINKED_SERVICE_TYPES)),
  is_skipped: opt(z.boolean()),
});

export const DeploymentStage = z.looseObject({
  id: id(),
  created_at: opt(dateTime()),
  updated_at: optNull(dateTime()),
  environment: opt(z.looseObject({ id: id() })),
  name: opt(str()),
  description: optNull(str()),
  deployment_order: opt(z.int()),
  services: opt(z.array(StageService)),
});
export type DeploymentStage = z.infer<typeof DeploymentStage>;

// ---- Organization, projects, members ------------------------------------------------------------

export const Member = z.looseObject({
  id: id(),
  created_at: opt(dateTime()),
  updated_at: optNull(dateTime()),
  email: opt(str()),
  name: optNull(str()),
  nickname: optNull(str()),
  profile_picture_url: optNull(str()),
  last_activity_at: optNull(dateTime()),
  role: opt(str()),
  role_name: optNull(str()),
  role_id: optNull(id()),
});
export type Member = z.infer<typeof Member>;

export const Project = z.looseObject({
  id: id(),
  created_at: opt(dateTime()),
  updated_at: optNull(dateTime()),
  name: opt(str()),
  associated_environments_count: opt(z.int()),
  organization: opt(z.looseObject({ id: id() })),
  description: optNull(str()),
});
export type Project = z.infer<typeof Project>;

// ---- Reference lists ----------------------------------------------------------------------------

export const CloudRegion = z.looseObject({
  name: str(),
  country_code: opt(str()),
  country: opt(str()),
  city: opt(str()),
  arm_supported: opt(z.boolean()),
  zones: opt(z.array(str())),
});
export type CloudRegion = z.infer<typeof CloudRegion>;

export const GitRepository = z.looseObject({
  id: str(),
  name: opt(str()),
  url: opt(str()),
  default_branch: optNull(str()),
  is_private: opt(z.boolean()),
});
export type GitRepository = z.infer<typeof GitRepository>;

export const AvailableHelmRepository = z.looseObject({
  kind: str(),
  required_config: optNull(z.record(z.string(), z.unknown())),
  is_mandatory: opt(z.boolean()),
});
export type AvailableHelmRepository = z.infer<typeof AvailableHelmRepository>;

export const AvailableIacVersion = z.looseObject({ engine: opt(openEnum(["VENDOR5"])), version: str() });
export type AvailableIacVersion = z.infer<typeof AvailableIacVersion>;

// ---- Credentials --------------------------------------------------------------------------------

/** The spec lists eight variants whose field lists are "not shown": the common fields, loose. */
export const CredentialsRecord = z.looseObject({
  id: id(),
  name: opt(str()),
  access_key_id: optNull(str()),
  object_type: opt(str()),
});
export type CredentialsRecord = z.infer<typeof CredentialsRecord>;

export const Vendor1CredentialsRequest = z.object({
  name: z.string().check(z.minLength(1)),
  vendor1_access_key: str(),
  vendor1_secret_key: str(),
  vendor1_project_id: str(),
  vendor1_organization_id: str(),
});
export type Vendor1CredentialsRequest = z.infer<typeof Vendor1CredentialsRequest>;

// ---- Platform component resolution --------------------------------------------------------------

const Constraints = z.looseObject({
  allowedValues: optNull(z.array(str())),
  min: optNull(z.number()),
  max: optNull(z.number()),
  minLength: optNull(z.number()),
  maxLength: optNull(z.number()),
  pattern: optNull(str()),
});
const fieldDescriptorFields = {
  key: str(),
  type: opt(str()),
  required: opt(z.boolean()),
  label: optNull(str()),
  sensitive: opt(z.boolean()),
  constraints: optNull(Constraints),
  defaultValue: opt(z.unknown()),
  description: optNull(str()),
};
export const FieldDescriptor = z.looseObject(fieldDescriptorFields);
export const Requirement = z.looseObject({ ...fieldDescriptorFields, scope: opt(str()), status: opt(str()) });
export const Binding = z.looseObject({ input: opt(str()), fromComponent: opt(str()), output: opt(str()) });
export const Violation = z.looseObject({ code: opt(str()), fieldPath: optNull(str()), message: opt(str()) });

export const PlatformComponentResolution = z.looseObject({
  clusterId: opt(id()),
  componentKey: opt(str()),
  fields: opt(z.array(FieldDescriptor)),
  requirements: opt(z.array(Requirement)),
  componentBindings: opt(z.array(Binding)),
  violations: opt(z.array(Violation)),
});
export type PlatformComponentResolution = z.infer<typeof PlatformComponentResolution>;

const freeForm = () => opt(z.record(z.string(), z.unknown()));
export const ResolveComponentRequest = z.object({
  profileConfig: freeForm(),
  clusterInputs: freeForm(),
  componentOutputs: freeForm(),
});
export type ResolveComponentRequest = z.infer<typeof ResolveComponentRequest>;

// ---- Envelopes ----------------------------------------------------------------------------------

export const resultsOf = <T extends z.ZodMiniType>(item: T) => z.looseObject({ results: z.array(item) });

export const DeploymentHistoryPage = z.looseObject({
  page: opt(z.int()),
  page_size: opt(z.int()),
  results: z.array(DeploymentHistoryItem),
});
export type DeploymentHistoryPage = z.infer<typeof DeploymentHistoryPage>;
