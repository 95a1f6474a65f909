/**
 * The records of the platform's API that Lookout reads, as zod/mini schemas (the records of the endpoints
 * it never calls are the simulator's: local/simulator/schemas.ts, built with the field helpers below).
 * The schemas follow the platform's published API spec; where the service differs from it, they follow
 * the service (docs/platform.md).
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

export const opt = z.optional;
/** Optional and nullable. */
export const optNull = <T extends z.ZodMiniType>(t: T) => z.optional(z.nullable(t));
export const str = () => z.string();
/** Ids and timestamps in responses are strings; their format is not policed on read (lenient). */
export const id = str;
export const dateTime = str;
export const description = () => z.string().check(z.maxLength(255));

// ---- Enumerations -------------------------------------------------------------------------------

export const LINKED_SERVICE_TYPES = ["APPLICATION", "CONTAINER", "DATABASE", "JOB", "HELM", "VENDOR5"] as const;
export const SERVICE_STATES = [
  "BUILDING", "BUILD_ERROR", "CANCELED", "CANCELING", "DELETED", "DELETE_ERROR", "DELETE_QUEUED", "DELETING",
  "DEPLOYED", "DEPLOYING", "DEPLOYMENT_ERROR", "DEPLOYMENT_QUEUED", "EXECUTING", "QUEUED", "READY", "RECAP",
  "RESTARTED", "RESTARTING", "RESTART_ERROR", "RESTART_QUEUED", "STOPPED", "STOPPING", "STOP_ERROR", "STOP_QUEUED",
  "UNAVAILABLE", "WAITING_DELETING", "WAITING_RESTARTING", "WAITING_RUNNING", "WAITING_STOPPING",
] as const;
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

// ---- Service status --------------------------------------------------------------------------

export const StatusDetails = z.looseObject({
  action: opt(openEnum(STATUS_DETAIL_ACTIONS)),
  status: opt(openEnum(STATUS_DETAIL_STATUSES)),
  sub_action: opt(str()),
});
export type StatusDetails = z.infer<typeof StatusDetails>;

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

// ---- Envelopes ----------------------------------------------------------------------------------

export const resultsOf = <T extends z.ZodMiniType>(item: T) => z.looseObject({ results: z.array(item) });

export const DeploymentHistoryPage = z.looseObject({
  page: opt(z.int()),
  page_size: opt(z.int()),
  results: z.array(DeploymentHistoryItem),
});
export type DeploymentHistoryPage = z.infer<typeof DeploymentHistoryPage>;
