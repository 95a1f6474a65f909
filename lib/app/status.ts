/**
 * `lookout status` wired to a table: the same ports on DynamoDB Local and on the deployed table, all
 * read-only (GetItem and Query: the audit API's permissions suffice). The report: lib/status/operations-report.ts.
 */
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { Config } from "../config/load.js";
import { allReceivers, receiverId, receiverLabel } from "../config/receivers.js";
import { DynamoDispatchStore, DynamoFeedLoopStore } from "../store/dispatch-store.js";
import { DynamoNotifyStore } from "../store/notify-store.js";
import { AuditTrail } from "../audit/trail.js";
import { DynamoAuditItems } from "../store/audit-store.js";
import { parseAuditQuery } from "../audit/parse.js";
import { DISPATCH_NAME } from "../dispatch/source-state.js";
import { watchlist } from "../dispatch/watchlist.js";
import type { StatusPorts, StatusSettings } from "../status/operations-report.js";

export function statusPorts(dynamodb: DynamoDBClient, tableName: string, retentionMs: number): StatusPorts {
  const dispatch = new DynamoDispatchStore({ client: dynamodb, tableName, retentionMs });
  const loops = new DynamoFeedLoopStore({ client: dynamodb, tableName, retentionMs });
  const audit = new AuditTrail(new DynamoAuditItems({ client: dynamodb, tableName }));
  const query = (type: "alert" | "quarantine", since: string, limit: number, deliveries: boolean) =>
    audit.query(parseAuditQuery({ type, from: since, limit: String(limit) }, new Date()), { deliveries });
  return {
    dispatchState: () => dispatch.get(DISPATCH_NAME),
    feedLoop: () => loops.get(DISPATCH_NAME),
    notify: new DynamoNotifyStore({ client: dynamodb, tableName, retentionMs }),
    async recentDeliveries(since, limit) {
      const page = await query("alert", since, limit, true);
      return page.rows
        .flatMap((row) => (row.deliveries ?? []).map((d) => ({
          receiver: d.receiver, state: d.state, updated_at: d.updated_at, alert_id: row.id, ...(d.error ? { error: d.error } : {}),
          ...(d.permanent ? { permanent: true } : {}),
        })))
        .sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    },
    async quarantined(since, limit) {
      const page = await query("quarantine", since, limit, false);
      return {
        rows: page.rows.map((r) => ({ at: r.at, id: r.id, kind: r.kind, ...(r.stage ? { stage: r.stage } : {}), ...(r.reason ? { reason: r.reason } : {}) })),
        more: Boolean(page.cursor),
      };
    },
  };
}

/** What the configuration says status should check: the watched sources, every receiver, the thresholds. */
export function statusSettings(config: Config, quarantineWithinMs?: number): StatusSettings {
  return {
    watch: watchlist(config),
    receivers: allReceivers(config.routes, config.notify).map((r) => ({ id: receiverId(r), label: receiverLabel(r) })),
    digestWithinMs: config.notify.digestWithinMs,
    failingAfter: config.health.failingAfter,
    ...(config.health.stalledAfterMs !== undefined ? { stalledAfterMs: config.health.stalledAfterMs } : {}),
    ...(quarantineWithinMs !== undefined ? { quarantineWithinMs } : {}),
  };
}
