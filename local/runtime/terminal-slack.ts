/**
 * Slack in the terminal: a SlackSender that prints each message as Slack would show it — new messages,
 * thread replies (indented, "also sent to the channel" when broadcast), and edits in place — so a local
 * run without a Slack workspace shows threads, updates and resolutions as they would appear. It keeps
 * what it printed, so read-backs (`findPosted`) and edits behave as Slack's Web API does.
 */
import type { PostedQuery, SlackMessage, SlackPosted, SlackSender, SlackTarget } from "../../lib/notify/types.js";
import { SLACK_ALERT_EVENT } from "../../lib/notify/types.js";
import { slackAsText, slackTitle } from "./slack-print.js";

interface Printed {
  ts: string;
  channel: string;
  thread_ts?: string;
  title: string;
  alertId?: string;
  atMs: number;
}

export interface TerminalSlackOptions {
  /** Told of each message posted, with its ts and channel (the demo clicks its buttons). */
  onPosted?: (message: SlackMessage, at: { ts: string; channel: string }) => void;
}

export function terminalSlack(print: (line: string) => void, now: () => Date = () => new Date(), receiver = "slack", opts: TerminalSlackOptions = {}): SlackSender {
  const messages = new Map<string, Printed>();
  let seq = 0;
  const nextTs = () => `${Math.floor(now().getTime() / 1000)}.${String(++seq).padStart(6, "0")}`;
  const channelOf = (target: SlackTarget) => (target.kind === "api" ? target.channel : "#webhook");
  const alertIdOf = (m: SlackMessage) => (m.metadata?.event_type === SLACK_ALERT_EVENT ? m.metadata.event_payload.alert_id : undefined);
  const who = (target: SlackTarget) => `${receiver} ${channelOf(target)}`;

  return {
    // It shows Slack's messages here and posts to no Slack: its deliveries are recorded as shown, nobody told.
    onlooker: true,
    async post(target, message) {
      const channel = channelOf(target);
      const ts = nextTs();
      const parent = message.thread_ts ? messages.get(message.thread_ts) : undefined;
      for (const line of slackAsText(message, { receiver: who(target), as: parent ? "reply" : "message", ...(parent ? { of: parent.title } : {}) })) print(line);
      const alertId = alertIdOf(message);
      messages.set(ts, {
        ts, channel, title: slackTitle(message), atMs: now().getTime(),
        ...(message.thread_ts ? { thread_ts: message.thread_ts } : {}), ...(alertId ? { alertId } : {}),
      });
      opts.onPosted?.(message, { ts, channel });
      return target.kind === "api" ? { ts, channel } : {};
    },
    async update(target, at, message) {
      // A message printed by an earlier run is gone from this one's memory: the edit is printed all the
      // same (a terminal cannot edit what it printed anyway) rather than failing as a receiver would.
      const old = messages.get(at.ts) ?? { ts: at.ts, channel: at.channel, title: "a message of an earlier run", atMs: now().getTime() };
      for (const line of slackAsText(message, { receiver: who(target), as: "update", of: old.title })) print(line);
      messages.set(at.ts, { ...old, title: slackTitle(message) });
      return { ts: at.ts, channel: at.channel };
    },
    async findPosted(target, q: PostedQuery): Promise<SlackPosted | undefined> {
      for (const m of messages.values()) {
        if (m.channel !== target.channel || m.alertId !== q.alertId || m.atMs < q.sinceMs) continue;
        if (q.threadTs ? m.thread_ts === q.threadTs || m.ts === q.threadTs : !m.thread_ts) return { ts: m.ts, channel: m.channel };
      }
      return undefined;
    },
  };
}
