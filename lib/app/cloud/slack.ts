/**
 * The Slack function's services: Slack sending, and email (SES) only when the packaged configuration's
 * fallback receiver is an email address — the one way a Slack delivery reaches email. The packaging
 * says which (infra/esbuild-plugins.cjs); the bundler then leaves the unused sender out of the bundle,
 * and the fallback's is loaded on its first message (./fallback-senders.ts).
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { slackSender } from "../../notify/slack/sender.js";
import { slackChannel } from "../../notify/slack/channel.js";
import { composeNotify } from "../notify.js";
import { packagedConfig } from "./config.js";
import { cloudSlackApiUrl, coldStart } from "./container.js";
import { cloudAdapters } from "./adapters.js";
import { cloudSecret } from "./secrets.js";
import { emailOnFirstUse } from "./fallback-senders.js";

/** Set by the packaging: whether notify.fallback names an email receiver. Unpackaged: assume it may. */
declare const LOOKOUT_FALLBACK_EMAIL: boolean | undefined;

export const cloudSlackNotify = coldStart(async (logger: Logger) => {
  const fallbackEmail = typeof LOOKOUT_FALLBACK_EMAIL === "boolean" ? LOOKOUT_FALLBACK_EMAIL : true;
  const config = await packagedConfig();
  return composeNotify(config, {
    ...cloudAdapters(logger, cloudSecret),
    slack: slackSender(cloudSlackApiUrl()),
    channels: { slack: slackChannel },
    ...(fallbackEmail && config.notify.email ? { emailTransport: emailOnFirstUse(async () => (await import("./ses.js")).cloudSes()) } : {}),
  });
});
