/**
 * The platform's endpoints that Lookout never calls — writes and reference lists, 15 of the spec's 21 —
 * as data, for the simulator to route and validate; and the whole spec's table, in the spec's order,
 * which the simulator serves and the client's contract tests call (Lookout's own six are
 * lib/platform/endpoints.ts).
 */
import { def, endpoints as lookoutEndpoints } from "../../lib/platform/endpoints.js";
import { resultsOf } from "../../lib/platform/schemas.js";
import * as s from "./schemas.js";

export const simulatorOnlyEndpoints = {
  createJobSecret: def({
    number: 1, method: "POST", path: "/job/{jobId}/secret", body: s.SecretRequest, response: s.Secret,
    successStatus: 201, summary: "add a secret to a job",
  }),
  restartServices: def({
    number: 2, method: "POST", path: "/environment/{environmentId}/service/restart-service",
    body: s.RestartServicesRequest, response: s.ServiceStatus, successStatus: 200,
    summary: "update and reboot selected services of an environment",
  }),
  resolvePlatformComponent: def({
    number: 3, method: "POST",
    path: "/organization/{organizationId}/cluster/{clusterId}/platformBinding/component/{componentKey}/resolve",
    pathFormats: { componentKey: "string" }, body: s.ResolveComponentRequest, idempotent: true,
    response: s.PlatformComponentResolution, successStatus: 200,
    summary: "compute the fields and requirements of a platform component",
  }),
  editVendor1Credentials: def({
    number: 4, method: "PUT", path: "/organization/{organizationId}/vendor1/credentials/{credentialsId}",
    body: s.Vendor1CredentialsRequest, response: s.CredentialsRecord, successStatus: 200,
    summary: "edit vendor1 credentials",
  }),
  createVendor1Credentials: def({
    number: 5, method: "POST", path: "/organization/{organizationId}/vendor1/credentials",
    body: s.Vendor1CredentialsRequest, response: s.CredentialsRecord, successStatus: 201,
    summary: "create vendor1 credentials",
  }),
  createDatabaseBackup: def({
    number: 6, method: "POST", path: "/database/{databaseId}/backup", body: s.BackupRequest,
    response: s.Backup, successStatus: 201, summary: "create a database backup",
  }),
  listEnvironmentVariables: def({
    number: 8, method: "GET", path: "/environment/{environmentId}/environmentVariable",
    response: resultsOf(s.EnvironmentVariable), successStatus: 200,
    summary: "list the variables of an environment",
  }),
  moveDeploymentStageAfter: def({
    number: 11, method: "PUT", path: "/deploymentStage/{deploymentStageId}/moveAfter/{stageId}",
    response: resultsOf(s.DeploymentStage), successStatus: 200,
    summary: "move a deployment stage after another",
  }),
  getServiceDeploymentStage: def({
    number: 12, method: "GET", path: "/service/{serviceId}/deploymentStage", response: s.DeploymentStage,
    successStatus: 200, summary: "get the deployment stage of a service",
  }),
  getDeploymentStage: def({
    number: 13, method: "GET", path: "/deploymentStage/{deploymentStageId}", response: s.DeploymentStage,
    successStatus: 200, summary: "get a deployment stage",
  }),
  listVendor3Regions: def({
    number: 17, method: "GET", path: "/vendor3/region", response: resultsOf(s.CloudRegion),
    successStatus: 200, summary: "list vendor3 regions",
  }),
  listVendor4Repositories: def({
    number: 18, method: "GET", path: "/account/vendor4/repository", response: resultsOf(s.GitRepository),
    successStatus: 200, summary: "list vendor4 repositories (deprecated)",
  }),
  listAvailableHelmRepositories: def({
    number: 19, method: "GET", path: "/availableHelmRepository", response: resultsOf(s.AvailableHelmRepository),
    successStatus: 200, summary: "list supported helm repository kinds",
  }),
  listAvailableIacVersions: def({
    number: 20, method: "GET", path: "/vendor5/availableVersion", response: resultsOf(s.AvailableIacVersion),
    successStatus: 200, summary: "list available infrastructure-as-code engine versions",
  }),
  deleteVendor2Credentials: def({
    number: 21, method: "DELETE", path: "/organization/{organizationId}/vendor2/credentials/{credentialsId}",
    successStatus: 204, summary: "delete vendor2 credentials",
  }),
} as const;

const all = { ...lookoutEndpoints, ...simulatorOnlyEndpoints };

/** Every endpoint of the spec, numbered 1 to 21 in its order. */
export const specEndpoints = Object.fromEntries(
  Object.entries(all).sort(([, a], [, b]) => a.number - b.number),
) as unknown as typeof all;
export type SpecEndpoints = typeof specEndpoints;
export type SpecEndpointName = keyof SpecEndpoints;
export const specEndpointNames = Object.keys(specEndpoints) as SpecEndpointName[];
