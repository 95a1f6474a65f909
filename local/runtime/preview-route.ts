/**
 * The route name of the terminal's Slack preview (local/runtime/terminal-slack.ts), which one machine
 * shows every event under when no Slack receiver is configured. Its sender is an onlooker, so its
 * deliveries are recorded as shown, nobody told (docs/audit.md, "Onlookers"); the name is this runner's
 * own: no configured route may take it, and the local audit reads deliveries stored under it before
 * onlookers were recorded as the preview's.
 */
import type { Config } from "../../lib/config/load.js";
import { ConfigError } from "../../lib/config/error.js";
import type { AuditItems, StoredItem } from "../../lib/model/audit-items.js";

export const PREVIEW_ROUTE = "terminal-preview";

/** Fails, naming the route's path in the configuration, when a route takes the preview's name. */
export function checkPreviewRoute(config: Pick<Config, "routes" | "source">): void {
  const i = config.routes.findIndex((r) => r.name === PREVIEW_ROUTE);
  if (i < 0) return;
  throw new ConfigError(config.source, `routes[${i}].name`, `must not be ${PREVIEW_ROUTE}: on one machine the terminal's Slack preview names its deliveries so`);
}

/**
 * Reads a delivery of an earlier format: the preview's, stored before onlookers were recorded (its
 * route, no `onlooker`), is an onlooker's. Nothing else changes.
 */
export function previewDeliveryOfEarlierFormat(item: StoredItem): StoredItem {
  return item.item_type === "delivery" && item.route === PREVIEW_ROUTE && item.onlooker === undefined ? { ...item, onlooker: true } : item;
}

/** The local store's audit items, with the preview's deliveries of the earlier format read as onlookers'. */
export function withEarlierPreviewDeliveries(items: AuditItems): AuditItems {
  return {
    queryIndex: (read) => items.queryIndex(read),
    rowItems: (keys) => items.rowItems(keys),
    get: (key) => items.get(key),
    partition: async (pk) => (await items.partition(pk)).map(previewDeliveryOfEarlierFormat),
  };
}
