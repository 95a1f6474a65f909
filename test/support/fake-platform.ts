/**
 * A platform answering the three list endpoints a poll reads from arrays the test fills, for fast
 * tests of polling decisions on the in-memory stores (the simulator over HTTP is for integration tests).
 */
import type { PlatformClient, RejectedItem } from "../../lib/platform/client.js";
import type { CallCost } from "../../lib/platform/cost.js";
import type { PlatformError } from "../../lib/platform/errors.js";
import type { ClusterLogEntry, DeploymentHistoryItem, WebhookEvent } from "../../lib/platform/schemas.js";

type ListName = "listWebhookEvents" | "listClusterLogs" | "listDeploymentHistory";

export class FakePlatform {
  deliveries: WebhookEvent[] = [];
  clusterLogs: ClusterLogEntry[] = [];
  /** Newest first, as the platform answers. */
  history: DeploymentHistoryItem[] = [];
  /** Items the next answers reject, beside the valid ones. */
  rejected: RejectedItem[] = [];
  /** Thrown by the next reads while set. */
  failure: PlatformError | undefined;
  /** Answers the whole history whatever the page size asked. */
  ignoresPageSize = false;
  readonly calls: Array<{ name: ListName; pageSize?: number }> = [];

  readonly client: Pick<PlatformClient, "list"> = {
    list: (async (name: ListName, input?: { query?: { pageSize?: number } }) => {
      const pageSize = input?.query?.pageSize;
      this.calls.push({ name, ...(pageSize !== undefined ? { pageSize } : {}) });
      if (this.failure) throw this.failure;
      const items = name === "listWebhookEvents" ? this.deliveries
        : name === "listClusterLogs" ? this.clusterLogs
        : this.ignoresPageSize ? this.history : this.history.slice(0, pageSize);
      return { items: [...items], rejected: [...this.rejected], envelope: {}, status: 200, cost: cost(name) };
    }) as unknown as PlatformClient["list"],
  };
}

export const cost = (endpoint: string, requests = 1): CallCost =>
  ({ endpoint, requests, retries: requests - 1, statuses: Array(requests).fill(200), waitedMs: 0 });
