/**
 * The senders a notify function has for `notify.fallback` only: SES from the Slack and HTTP functions,
 * Slack from the email and HTTP functions. Only a delivery that failed for good reaches the fallback, so
 * few invocations send through them: each is loaded on its first message (a failed load is tried again
 * on the next) by an `import()`, which the packaging makes a chunk of its own (serverless.yml
 * `splitting`), and no cold start loads nodemailer, the SES client or the Slack clients for them.
 * The `import()` is written where the sender is chosen, in the branch the packaging keeps or drops
 * (infra/esbuild-plugins.cjs): one in a function the bundle never calls would still become a chunk.
 */
import type { EmailTransport, SlackSender } from "../../notify/types.js";
import { coldStart } from "./container.js";

/** An email transport that `load` builds on its first message. */
export function emailOnFirstUse(load: () => Promise<EmailTransport>): EmailTransport {
  const loaded = coldStart(load);
  return { send: async (message) => (await loaded()).send(message) };
}

/** A Slack sender that `load` builds on its first call. */
export function slackOnFirstUse(load: () => Promise<SlackSender>): SlackSender {
  const loaded = coldStart(load);
  return {
    post: async (target, message) => (await loaded()).post(target, message),
    findPosted: async (target, query) => (await loaded()).findPosted(target, query),
    update: async (target, at, message) => (await loaded()).update(target, at, message),
  };
}
