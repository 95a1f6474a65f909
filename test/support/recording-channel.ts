/** A Slack-like channel that accepts every message and digest, for tests that need deliveries in the store. */
import type { Channel } from "../../lib/notify/deliver.js";

export function recordingChannel(id: string): Channel {
  let n = 0;
  return {
    id, label: `slack #${id}`,
    async send() {
      return { ts: `${++n}.000100`, channel: "C1" };
    },
    async sendDigest() {
      return { ts: `${++n}.000200` };
    },
  };
}
