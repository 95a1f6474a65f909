/**
 * The email function's services: email through SES, and Slack (with the secrets its receivers name)
 * only when the packaged configuration's fallback receiver is on Slack — the one way an email delivery
 * reaches Slack. The packaging says which (infra/esbuild-plugins.cjs); the bundler then leaves the
 * Slack client and the SSM and Secrets Manager helpers out of the bundle. A fallback on Slack is loaded
 * on its first message (./fallback-senders.ts).
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { resolveSecret } from "../../config/secrets.js";
import { composeNotify } from "../notify.js";
import { packagedConfig } from "./config.js";
import { cloudSlackApiUrl, coldStart } from "./container.js";
import { cloudAdapters } from "./adapters.js";
import { cloudSecret } from "./secrets.js";
import { cloudSes } from "./ses.js";
import { emailChannel } from "../../notify/email/channel.js";
import { slackOnFirstUse } from "./fallback-senders.js";

/** Set by the packaging: whether notify.fallback names a Slack receiver. Unpackaged: assume it may. */
declare const LOOKOUT_FALLBACK_SLACK: boolean | undefined;

export const cloudEmailNotify = coldStart(async (logger: Logger) => {
  const fallbackSlack = typeof LOOKOUT_FALLBACK_SLACK === "boolean" ? LOOKOUT_FALLBACK_SLACK : true;
  const config = await packagedConfig();
  // Email receivers name no secret: only Slack's need SSM or Secrets Manager.
  return composeNotify(config, {
    ...cloudAdapters(logger, fallbackSlack ? cloudSecret : (ref) => resolveSecret(ref, process.env)),
    ...(fallbackSlack ? { slack: slackOnFirstUse(async () => (await import("../../notify/slack/sender.js")).slackSender(cloudSlackApiUrl())) } : {}),
    ...(config.notify.email ? { emailTransport: cloudSes() } : {}),
    channels: { email: emailChannel },
  });
});
