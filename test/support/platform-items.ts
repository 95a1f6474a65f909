import { randomUUID } from "node:crypto";

/** Platform items as the spec shows them, for tests that make them hostile one field at a time. */
const MIN = 60_000;

export type Json = Record<string, unknown>;

/** `ago` milliseconds before the wall clock, as the platform writes times. */
export const iso = (ago: number) => new Date(Date.now() - ago).toISOString();

/** A copy of `o` with the value at a dotted path set (objects made on the way). */
export function set(o: Json, path: string, value: unknown): Json {
  const copy = structuredClone(o);
  const keys = path.split(".");
  let cur = copy as Json;
  for (const k of keys.slice(0, -1)) cur = (cur[k] ??= {}) as Json;
  cur[keys.at(-1)!] = value;
  return copy;
}

/** A deployment history entry of one execution: `ago` is how long ago it was last updated. */
export const deployment = (serviceId: string, exec: string, status: string, ago: number): Json => ({
  identifier: { name: "api", service_id: serviceId, service_type: "APPLICATION", execution_id: exec },
  status,
  auditing_data: { created_at: iso(ago + MIN), updated_at: iso(ago), triggered_by: "ann@example.com", origin: "GIT" },
  details: {
    commit: {
      created_at: iso(ago + 5 * MIN), git_commit_id: "0123456789abcdef0123456789abcdef01234567", tag: "v1", message: "fix things",
      author_name: "Ann", author_avatar_url: "https://avatars.example.com/ann", commit_page_url: "https://git.example.com/c/0123456",
    },
    build_pod_name: "builder-api-1",
  },
  status_details: { action: "DEPLOY", status: status.endsWith("_ERROR") ? "ERROR" : "SUCCESS", sub_action: "NONE" },
  icon_uri: "app://qovery-console/application",
  total_duration: "PT2M11S",
});

/** A webhook delivery `ago` milliseconds old whose target answered `status` (null: no answer). */
export const delivery = (id: string, status: number | null, ago: number, serviceId = randomUUID()): Json => ({
  id, created_at: iso(ago), kind: "STANDARD", matched_event: "DEPLOYMENT_FAILURE", target_url_used: "https://hooks.example.com/in",
  request: { event_type: "DEPLOYMENT_FAILURE", payload: { applications: [{ id: serviceId, name: "api" }], project: { id: randomUUID(), name: "shop" } } },
  target_response_status_code: status, target_response_body: status === 200 ? "ok" : "Service Unavailable",
});

/** A cluster log entry: an `error` entry carries the error object, any other its details. */
export const logEntry = (step: string, type: string, ago: number, message: string): Json => ({
  type, timestamp: `${iso(ago).slice(0, -1)}123456Z`, step,
  message: { safe_message: message },
  ...(type === "error"
    ? { error: { tag: "CANNOT_UNINSTALL_HELM_CHART", user_log_message: "helm said no", link: "https://docs.example.com/e", hint_message: "retry", underlying_error: { message: "boom" }, event_details: { provider_kind: "vendor2", region: "eu", transmitter: { type: "kubernetes", id: "t", name: "n" } } } }
    : { details: { provider_kind: "vendor2", region: "eu", transmitter: { type: "Kubernetes", id: "t", name: "n" } } }),
});
