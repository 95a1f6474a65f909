/**
 * The records of the platform's endpoints that Lookout never calls (secrets, variables, service status,
 * backups, deployment stages, reference lists, credentials, component resolution), as zod/mini schemas:
 * the simulator serves and validates them (./endpoints.ts). The conventions are those of the records
 * Lookout reads (lib/platform/schemas.ts), whose field helpers these use.
 */
import * as z from "zod/mini";
import {
  LINKED_SERVICE_TYPES, SERVICE_STATES, StatusDetails, dateTime, description, id, openEnum, opt, optNull, str,
} from "../../lib/platform/schemas.js";

// ---- Enumerations -------------------------------------------------------------------------------

export const VARIABLE_SCOPES = [
  "APPLICATION", "BUILT_IN", "ENVIRONMENT", "PROJECT", "CONTAINER", "JOB", "HELM", "VENDOR5", "AGENTIC_WORKFLOW",
] as const;
export const VARIABLE_TYPES = [
  "VALUE", "ALIAS", "OVERRIDE", "BUILT_IN", "FILE", "EXTERNAL_SECRET", "FILE_EXTERNAL_SECRET",
] as const;

export const SERVICE_DEPLOYMENT_STATUSES = ["NEVER_DEPLOYED", "OUT_OF_DATE", "UP_TO_DATE"] as const;

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
