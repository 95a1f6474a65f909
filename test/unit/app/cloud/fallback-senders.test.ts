/**
 * The notify functions' fallback senders (lib/app/cloud/fallback-senders.ts): loaded on their first
 * message, not before; loaded once and shared; a load that failed is tried again on the next message.
 */
import { describe, expect, it } from "vitest";
import { emailOnFirstUse, slackOnFirstUse } from "../../../../lib/app/cloud/fallback-senders.js";
import type { EmailMessage, EmailTransport, SlackSender } from "../../../../lib/notify/types.js";

const message: EmailMessage = { from: "lookout@example.com", to: ["oncall@example.com"], subject: "s", text: "t", html: "<p>t</p>" };

describe("a fallback sender", () => {
  it("is loaded on its first message, once, and shared by the next ones", async () => {
    let loads = 0;
    const sent: string[] = [];
    const transport = emailOnFirstUse(async () => {
      loads++;
      return { send: async (m) => (sent.push(m.subject), { messageId: `m-${sent.length}` }) } satisfies EmailTransport;
    });
    expect(loads).toBe(0);
    expect(await Promise.all([transport.send(message), transport.send({ ...message, subject: "s2" })])).toEqual([{ messageId: "m-1" }, { messageId: "m-2" }]);
    expect(loads).toBe(1);
    expect(sent).toEqual(["s", "s2"]);
  });

  it("whose load failed fails that message and is loaded again for the next", async () => {
    let loads = 0;
    const sender = slackOnFirstUse(async () => {
      if (++loads === 1) throw new Error("chunk not readable");
      return { post: async () => ({ ts: "1.0" }), findPosted: async () => undefined, update: async () => ({ ts: "1.0" }) } satisfies SlackSender;
    });
    const target = { kind: "webhook" as const, url: "https://hooks.example/x" };
    await expect(sender.post(target, { text: "t", blocks: [] })).rejects.toThrow("chunk not readable");
    expect(await sender.post(target, { text: "t", blocks: [] })).toEqual({ ts: "1.0" });
    expect(await sender.findPosted({ kind: "api", token: "x", channel: "C1" }, { alertId: "a", sinceMs: 0 })).toBeUndefined();
    expect(loads).toBe(2);
  });
});
