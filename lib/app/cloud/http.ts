/**
 * The HTTP receivers' function's services (PagerDuty, generic webhooks, Teams): their one HTTP sender,
 * and Slack or email (SES) only when the packaged configuration's fallback names one — the one way an
 * HTTP delivery reaches them. The packaging says which (infra/esbuild-plugins.cjs); the bundler then
 * leaves the unused senders out of the bundle, and loads the fallback's on its first message
 * (./fallback-senders.ts).
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { httpChannels } from "../../notify/http-channels.js";
import { composeNotify } from "../notify.js";
import { packagedConfig } from "./config.js";
import { cloudSlackApiUrl, coldStart } from "./container.js";
import { cloudAdapters } from "./adapters.js";
import { cloudSecret } from "./secrets.js";
import { emailOnFirstUse, slackOnFirstUse } from "./fallback-senders.js";

/** Set by the packaging: whether notify.fallback names an email or a Slack receiver. Unpackaged: assume it may. */
declare const LOOKOUT_FALLBACK_EMAIL: boolean | undefined;
declare const LOOKOUT_FALLBACK_SLACK: boolean | undefined;

export const cloudHttpNotify = coldStart(async (logger: Logger) => {
  const fallbackEmail = typeof LOOKOUT_FALLBACK_EMAIL === "boolean" ? LOOKOUT_FALLBACK_EMAIL : true;
  const fallbackSlack = typeof LOOKOUT_FALLBACK_SLACK === "boolean" ? LOOKOUT_FALLBACK_SLACK : true;
  const config = await packagedConfig();
  return composeNotify(config, {
    ...cloudAdapters(logger, cloudSecret),
    httpChannel: httpChannels(process.env.LOOKOUT_PAGERDUTY_URL ? { pagerDutyUrl: process.env.LOOKOUT_PAGERDUTY_URL } : {}),
    ...(fallbackSlack ? { slack: slackOnFirstUse(async () => (await import("../../notify/slack/sender.js")).slackSender(cloudSlackApiUrl())) } : {}),
    ...(fallbackEmail && config.notify.email ? { emailTransport: emailOnFirstUse(async () => (await import("./ses.js")).cloudSes()) } : {}),
  });
});
