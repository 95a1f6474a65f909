/** A cluster's logs: entries have no id, so each is known by its content hash; error entries are alerted once. */
import type { ClusterLogEntry } from "../../platform/schemas.js";
import type { NamedRef } from "../../model/event.js";
import { clusterDetail, withOrganizationName } from "../../alerts/build.js";
import { normalizeClusterLog } from "../normalize.js";
import { readList } from "./list.js";
import type { PollContext, SourceReader } from "./reader.js";

export const clusterLogs: SourceReader = {
  read(poll: PollContext) {
    const { req, deps } = poll;
    const { organizationId, id } = req.source;
    const name = deps.clusterNames?.get(id);
    const cluster: NamedRef | undefined = name ? { id, name } : undefined;
    return readList(poll, {
      read: () => deps.client.list("listClusterLogs", { path: { organizationId, clusterId: id } }),
      normalize: (e: ClusterLogEntry) => normalizeClusterLog(e, req.source),
      occurredAt: (r) => r.timestamp,
      detail: (r, at) => withOrganizationName(clusterDetail(r, at, cluster), deps.organizationNames),
    });
  },
};
