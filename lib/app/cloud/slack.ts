/**
 * The Slack function's services: Slack sending, and email (SES) only when the packaged configuration's
 * fallback receiver is an email address — the one way a Slack delivery reaches email. The packaging
 * says which (infra/esbuild-plugins.cjs); the bundler then leaves the unused sender out of the bundle.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { sesTransport } from "../../notify/email/transport.js";
import { slackSender } from "../../notify/slack/send.js";
import { composeNotify } from "../notify.js";
import { packagedConfig } from "./config.js";
import { cloudAdapters, cloudSlackApiUrl, coldStart } from "./container.js";
import { cloudSecret } from "./secrets.js";

/** Set by the packaging: whether notify.fallback names an email receiver. Unpackaged: assume it may. */
declare const LOOKOUT_FALLBACK_EMAIL: boolean | undefined;

export const cloudSlackNotify = coldStart(async (logger: Logger) => {
  const fallbackEmail = typeof LOOKOUT_FALLBACK_EMAIL === "boolean" ? LOOKOUT_FALLBACK_EMAIL : true;
  const config = await packagedConfig();
  return composeNotify(config, {
    ...cloudAdapters(logger, cloudSecret),
    slack: slackSender(cloudSlackApiUrl()),
    ...(fallbackEmail && config.notify.email ? { emailTransport: sesTransport(new SESv2Client({})) } : {}),
  });
});
