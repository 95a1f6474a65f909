/**
 * The email function's services: email through SES, and Slack (with the secrets its receivers name)
 * only when the packaged configuration's fallback receiver is on Slack — the one way an email delivery
 * reaches Slack. The packaging says which (infra/esbuild-plugins.cjs); the bundler then leaves the
 * Slack client and the SSM and Secrets Manager helpers out of the bundle.
 */
import type { Logger } from "@aws-lambda-powertools/logger";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { resolveSecret } from "../../config/secrets.js";
import { sesTransport } from "../../notify/email/transport.js";
import { slackSender } from "../../notify/slack/send.js";
import { composeNotify } from "../notify.js";
import { packagedConfig } from "./config.js";
import { cloudAdapters, cloudSlackApiUrl, coldStart } from "./container.js";
import { cloudSecret } from "./secrets.js";

/** Set by the packaging: whether notify.fallback names a Slack receiver. Unpackaged: assume it may. */
declare const LOOKOUT_FALLBACK_SLACK: boolean | undefined;

export const cloudEmailNotify = coldStart(async (logger: Logger) => {
  const fallbackSlack = typeof LOOKOUT_FALLBACK_SLACK === "boolean" ? LOOKOUT_FALLBACK_SLACK : true;
  const config = await packagedConfig();
  // Email receivers name no secret: only Slack's need SSM or Secrets Manager.
  return composeNotify(config, {
    ...cloudAdapters(logger, fallbackSlack ? cloudSecret : (ref) => resolveSecret(ref, process.env)),
    ...(fallbackSlack ? { slack: slackSender(cloudSlackApiUrl()) } : {}),
    ...(config.notify.email ? { emailTransport: sesTransport(new SESv2Client({})) } : {}),
  });
});
