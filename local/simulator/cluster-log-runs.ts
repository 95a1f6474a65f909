/**
 * Cluster log runs (endpoint 10), generated from the PRNG: oldest first, no ids, nanosecond timestamps,
 * lowercase types, `error` only on error entries and `details` only on the others (docs/platform.md).
 */
import type { ClusterLogEntry } from "../../lib/platform/schemas.js";
import { nanoIso } from "./clock.js";
import type { Rng } from "./ids.js";
import type { Cluster } from "./state.js";

export interface ClusterRunOptions {
  /** Total number of entries, errors included (default 20). */
  entries?: number;
  /** How many of them are `type: "error"` entries, placed at the end of the run (default 0). */
  errors?: number;
  /** The operation of the run: its steps are `<kind>`, `<past tense>` and `<kind>Error` (default Upgrade). */
  kind?: "Create" | "Upgrade" | "Delete" | "Pause" | "Restart";
  /** Where error entries carry `underlying_error` (default alternate: both forms are seen). */
  underlyingErrorIn?: "error" | "event_details" | "alternate";
  /** When the run ended (default: now). Entries are spread over the time before it. */
  at?: string | Date;
}

export interface GenerateInput extends Omit<ClusterRunOptions, "at"> {
  endMs: number;
  unknownEnums?: boolean;
}

const PAST: Record<string, string> = { Create: "Created", Upgrade: "Upgraded", Delete: "Deleted", Pause: "Paused", Restart: "Restarted" };
const ERROR_STEP: Record<string, string> = {
  Create: "CreateError", Upgrade: "UpgradeError", Delete: "DeleteError", Pause: "PauseError", Restart: "RestartedError",
};

const ERRORS = [
  { tag: "CANNOT_UNINSTALL_HELM_CHART", msg: "Cannot uninstall helm chart `ingress-nginx`.", hint: "Check that no other operation holds the helm release lock, then retry.", cause: "helm uninstall: release ingress-nginx: context deadline exceeded" },
  { tag: "CANNOT_UPGRADE_HELM_CHART", msg: "Cannot upgrade helm chart `cert-manager`.", hint: "Look at the chart's pods for crash loops.", cause: "UPGRADE FAILED: timed out waiting for the condition" },
  { tag: "KUBERNETES_API_UNREACHABLE", msg: "The Kubernetes API of the cluster cannot be reached.", hint: "Check the cluster's network rules and that the control plane is running.", cause: "dial tcp 10.0.0.1:443: i/o timeout" },
  { tag: "CLOUD_PROVIDER_QUOTA_EXCEEDED", msg: "The cloud provider refused to create nodes: quota exceeded.", hint: "Ask the provider for a higher instance quota in this region.", cause: "InstanceLimitExceeded: You have requested more instances than your current limit allows" },
  { tag: "CANNOT_CREATE_NODE_GROUP", msg: "Cannot create the node group of the cluster.", hint: "Check the instance type is offered in every zone of the region.", cause: "node group creation failed: unsupported instance type in zone c" },
] as const;

const MESSAGES = {
  debug: ["Reading cluster state", "Computing the plan of changes", "Helm release found", "Waiting for nodes to be ready"],
  info: ["Applying infrastructure changes", "Deploying chart cert-manager", "Deploying chart ingress-nginx", "Node group is up to date", "DNS records checked"],
  warning: ["Pod restarted during rollout", "Node is under memory pressure", "Chart deprecation notice: values key renamed"],
} as const;

export function generateClusterRun(rng: Rng, cluster: Cluster, input: GenerateInput): ClusterLogEntry[] {
  const total = input.entries ?? 20;
  const errors = input.errors ?? 0;
  if (!Number.isInteger(total) || total < 0) throw new RangeError(`entries must be an integer >= 0, got ${total}`);
  if (!Number.isInteger(errors) || errors < 0 || errors > total) throw new RangeError(`errors must be an integer in 0..entries, got ${errors}`);
  const kind = input.unknownEnums ? "Hibernate" : (input.kind ?? "Upgrade");
  const errorStep = input.unknownEnums ? "HibernateError" : (ERROR_STEP[kind] ?? `${kind}Error`);
  const placement = input.underlyingErrorIn ?? "alternate";

  // Spread the entries over the time before the end of the run, 0.2–3 s apart.
  const gaps = Array.from({ length: total }, () => rng.int(200, 3000));
  let t = input.endMs - gaps.reduce((a, b) => a + b, 0);
  const transmitter = () => ({ type: rng.chance(0.5) ? "kubernetes" : "Kubernetes", id: cluster.id, name: cluster.name });
  const eventDetails = () => ({ provider_kind: cluster.providerKind, region: cluster.region, transmitter: transmitter() });

  const out: ClusterLogEntry[] = [];
  for (let i = 0; i < total; i++) {
    t += gaps[i]!;
    const timestamp = nanoIso(t, rng.int(0, 999_999));
    const errorIndex = i - (total - errors);
    if (errorIndex >= 0) {
      const e = rng.pick(ERRORS);
      const underlying = { message: e.cause };
      const inDetails = placement === "event_details" || (placement === "alternate" && errorIndex % 2 === 1);
      // The last error of a failed run is often the global one.
      const step = errors > 1 && errorIndex === errors - 1 ? "GlobalError" : errorStep;
      out.push({
        type: "error",
        timestamp,
        step,
        message: { safe_message: e.msg },
        error: {
          tag: e.tag,
          user_log_message: e.msg,
          link: `https://docs.platform.example/troubleshooting/${e.tag.toLowerCase()}`,
          hint_message: e.hint,
          event_details: inDetails ? { ...eventDetails(), underlying_error: underlying } : eventDetails(),
          ...(inDetails ? {} : { underlying_error: underlying }),
        },
      });
      continue;
    }
    const last = i === total - 1;
    const type = i === 0 || last ? "info" : rng.pick(["debug", "info", "info", "warning"] as const);
    const step = last && errors === 0 ? (PAST[kind] ?? `${kind}d`) : kind;
    const safe = i === 0 ? `${kind} of cluster ${cluster.name} started` : last && errors === 0 ? `${kind} of cluster ${cluster.name} done` : rng.pick(MESSAGES[type]);
    out.push({ type, timestamp, step, message: { safe_message: safe }, details: eventDetails() });
  }
  return out;
}
