/** What the notify functions need in the cloud: routes, the notify store, Slack and SES, built once. */
import { Logger } from "@aws-lambda-powertools/logger";
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { slackSender } from "../lib/notify/slack/send.js";
import { sesTransport } from "../lib/notify/email/transport.js";
import { composeNotify } from "../lib/app/notify.js";
import type { NotifyHandlerDeps } from "./notify.js";
import { cloudAdapters, loadBundledConfig } from "./runtime.js";

let deps: Promise<NotifyHandlerDeps> | undefined;

export function notifyRuntime(logger: Logger): Promise<NotifyHandlerDeps> {
  deps ??= (async () => {
    const config = loadBundledConfig();
    return composeNotify(config, {
      ...cloudAdapters(logger),
      slack: slackSender(),
      ...(config.notify.email ? { emailTransport: sesTransport(new SESv2Client({})) } : {}),
    });
  })().catch((err) => {
    deps = undefined;
    throw err;
  });
  return deps;
}
