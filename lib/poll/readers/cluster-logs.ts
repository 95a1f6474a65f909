/**
 * A cluster's logs: entries have no id, so each is known by its content hash; error entries are alerted
 * once. An error opens or joins the cluster's incident; the next successful step, or the quiet period
 * without errors, closes it (docs/events.md, "Incidents").
 */
import type { ClusterLogEntry } from "../../platform/schemas.js";
import type { LookoutEventDetail, NamedRef } from "../../model/event.js";
import { clusterDetail, clusterRecoveredDetail, incidentSubject, withOrganizationName } from "../../alerts/build.js";
import { normalizeClusterLog } from "../normalize.js";
import { clusterStepSucceeded } from "../deployment-status.js";
import { readList } from "./list.js";
import type { PollContext, SourceReader } from "./reader.js";

/** A cluster's incident closes after this long without an error entry, unless configured (`PollDeps.clusterQuietMs`). */
export const DEFAULT_CLUSTER_QUIET_MS = 30 * 60_000;

export const clusterLogs: SourceReader = {
  read(poll: PollContext) {
    const { req, deps } = poll;
    const { organizationId, id } = req.source;
    const name = deps.clusterNames?.get(id);
    const cluster: NamedRef | undefined = name ? { id, name } : undefined;
    const named = (d: LookoutEventDetail) => withOrganizationName(d, deps.organizationNames);
    const src = { organization_id: organizationId, cluster_id: id };
    return readList(poll, {
      read: () => deps.client.list("listClusterLogs", { path: { organizationId, clusterId: id } }),
      normalize: (e: ClusterLogEntry) => normalizeClusterLog(e, req.source),
      occurredAt: (r) => r.timestamp,
      detail: (r, at) => named(clusterDetail(r, at, cluster)),
      incidents: {
        subject: () => incidentSubject.cluster(id),
        always: [incidentSubject.cluster(id)],
        outcome: (r) => (r.failed ? "failure" : clusterStepSucceeded(r.type, r.step) ? "success" : "neutral"),
        signature: (r) => JSON.stringify([r.type, r.error?.tag, r.error?.message ?? r.message]),
        resolvedBy: (r) => `step ${r.step}`,
        quietMs: deps.clusterQuietMs ?? DEFAULT_CLUSTER_QUIET_MS,
        closing: (r, close, at) => named(clusterRecoveredDetail(src, close, at, cluster, r)),
        quiet: (_subject, close, at) => named(clusterRecoveredDetail(src, close, at, cluster)),
      },
    });
  },
};
