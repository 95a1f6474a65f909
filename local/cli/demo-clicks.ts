/**
 * The demo's person at the keyboard (docs/actions.md): `lookout start` without a configuration shows
 * Slack in the terminal, where nobody can press a button, so the demo presses two for them, as Slack
 * would send them — a signed request to the local interactivity endpoint: Acknowledge on the first
 * incident's message, Mute until resolved on the second's. The terminal then shows the message edited
 * ("Acknowledged by …") and the replies in their threads, and the audit trail has both clicks.
 */
import type { SlackMessage } from "../../lib/notify/types.js";
import { INCIDENT_ACTIONS } from "../../lib/model/incident-action.js";
import { slackClick } from "../receivers/slack-receiver.js";

export interface DemoClicksOptions {
  signingSecret: string;
  /** Who clicks, as Slack names a user. */
  user?: { id: string; name: string };
  /** How long after a message is shown its button is pressed (a person reads it first). */
  afterMs?: number;
  /** Told of each press and what the endpoint answered. */
  say: (line: string) => void;
}

const PRESSES = [INCIDENT_ACTIONS.acknowledge, INCIDENT_ACTIONS.mute_until_resolved] as const;

const hasButtons = (m: SlackMessage) =>
  JSON.stringify([m.blocks ?? [], (m.attachments ?? []).map((a) => a.blocks ?? [])]).includes(`"action_id":"${INCIDENT_ACTIONS.acknowledge}"`);

/**
 * A preview observer (`onPosted`) and the endpoint's URL when it is known (`endpoint`): each of the first
 * two incident messages gets its press, once. `stop` cancels presses not yet made.
 */
export function demoClicks(opts: DemoClicksOptions) {
  const user = opts.user ?? { id: "U0DEMO", name: "you" };
  let url: string | undefined;
  let pressed = 0;
  const timers = new Set<NodeJS.Timeout>();
  const press = async (message: SlackMessage, at: { ts: string; channel: string }, actionId: string) => {
    if (!url) return;
    const click = slackClick({ form: "api", ts: at.ts, channel: at.channel, channelId: at.channel, ...message } as Parameters<typeof slackClick>[0], actionId, user, opts.signingSecret);
    const label = actionId === INCIDENT_ACTIONS.acknowledge ? "👀 Acknowledge" : "🔕 Mute until resolved";
    try {
      const res = await fetch(url, { method: "POST", headers: click.headers, body: click.body });
      opts.say(`demo: ${user.name} pressed [${label}] on "${message.text?.slice(0, 80) ?? at.ts}" (the endpoint answered ${res.status})`);
    } catch (err) {
      opts.say(`demo: pressing [${label}] failed: ${(err as Error).message}`);
    }
  };
  return {
    endpoint(endpointUrl: string) {
      url = endpointUrl;
    },
    onPosted(message: SlackMessage, at: { ts: string; channel: string }) {
      if (message.thread_ts || pressed >= PRESSES.length || !hasButtons(message)) return;
      const actionId = PRESSES[pressed++]!;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void press(message, at, actionId);
      }, opts.afterMs ?? 3_000);
      timers.add(timer);
    },
    stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
