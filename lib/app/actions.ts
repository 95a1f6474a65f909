/**
 * The composition root of acting from Slack (docs/actions.md): the ports `actOn` needs, from the
 * configuration — the notify store, the Slack sender, and which configured receiver showed the message
 * that was clicked (its delivery record names the channel id Slack answered with), with its token and
 * how its route presents the alert.
 */
import type { Config } from "../config/load.js";
import { allReceivers, receiverId } from "../config/receivers.js";
import type { SlackReceiver } from "../config/route-types.js";
import type { LookoutEventDetail } from "../model/event.js";
import type { ActionPorts, ShownBy } from "../actions/act.js";
import { presenterFor } from "../notify/presentation.js";
import type { SlackSender } from "../notify/types.js";
import { DynamoNotifyStore } from "../store/notify-store.js";
import type { Adapters } from "./adapters.js";

export interface ActionAdapters extends Omit<Adapters, "onCost"> {
  slack: SlackSender;
}

/** `also`: receivers no route names that post messages with buttons all the same (one machine's terminal preview). */
export function composeActions(config: Config, a: ActionAdapters, also: readonly SlackReceiver[] = []): ActionPorts {
  const now = a.now ?? (() => new Date());
  const store = new DynamoNotifyStore({ client: a.dynamodb, tableName: a.tableName, retentionMs: config.retentionMs, now });
  const present = presenterFor(config);
  // The Web API receivers, by id: only they post messages with buttons.
  const apiReceivers = new Map(
    [...allReceivers(config.routes, config.notify), ...also]
      .filter((r): r is SlackReceiver & { form: "api" } => r.type === "slack" && r.form === "api")
      .map((r) => [receiverId(r), r]),
  );
  const shownBy = async (alert: LookoutEventDetail, channelId: string): Promise<ShownBy | undefined> => {
    const shown = (await store.deliveriesOf(alert.id)).find((d) => d.state === "sent" && d.channel === channelId && apiReceivers.has(d.receiver_id));
    if (!shown) return undefined;
    const r = apiReceivers.get(shown.receiver_id)!;
    return {
      target: { kind: "api", token: await a.resolveSecret(r.tokenRef), channel: r.channel, actions: true, ...(r.broadcastResolution === undefined ? {} : { broadcastResolution: r.broadcastResolution }) },
      presentation: present(alert, shown.route),
    };
  };
  return { store, slack: a.slack, shownBy, now, log: a.log };
}
