/** The view of a cluster log error: about its cluster; what = the error tag. */
import type { KindView } from "./types.js";
import { nameOf } from "./format.js";
import { statusField } from "./deployment.js";

export const clusterView: KindView = {
  subject: (detail) => nameOf(detail.cluster) ?? "cluster",
  what: (detail) => detail.error?.tag ?? detail.status,
  fields: statusField,
};
