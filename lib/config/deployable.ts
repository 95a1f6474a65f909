/**
 * What deploying refuses in a configuration that loads: what works on one machine but cannot in the
 * cloud. Packaging (infra/stack.ts, loadDeployConfig) builds only what passes; `lookout check-config
 * --deploy` and `lookout cloud-local --config` say it first, a problem a line at the field's path.
 */
import type { Config } from "./load.js";
import type { ConfigProblem } from "./error.js";
import { receiverSecretRefs } from "./routes.js";

/** The secret references the deployed functions would resolve from an environment they do not get. */
export function envReferences(config: Config): Array<{ field: string; ref: string }> {
  // The SMTP URL is for one machine only: the cloud sends through SES.
  const refs = receiverSecretRefs(config.routes, config.notify).filter((r) => r.field !== "notify.email.smtp_url");
  return [{ field: "platform.token", ref: config.platform.tokenRef }, ...refs].filter((r) => r.ref.startsWith("env:"));
}

export function deployProblems(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = envReferences(config).map(({ field, ref }) => ({
    field, problem: `${ref} is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:…`,
  }));
  // The notify-http function carries the routes' PagerDuty, webhook and Teams receivers; the default
  // route's rule and the other functions' fallback carry Slack and email only: refused, never dropped unsaid.
  const named: Array<[string, readonly { type: string }[] | undefined]> = [
    ["notify.default", config.notify.default?.http],
    ["notify.fallback", config.notify.fallback?.http],
  ];
  for (const [at, http] of named) {
    for (const type of new Set((http ?? []).map((r) => r.type))) {
      problems.push({ field: `${at}.${type}`, problem: `delivered by lookout start/run on one machine; in the cloud ${at} names Slack or email only` });
    }
  }
  // Dispatch's tick (once a minute) flushes held digests: a shorter bound cannot be kept there.
  if (config.notify.digestWithinMs < 60_000) problems.push({ field: "notify.digest_within", problem: "the cloud flushes digests once a minute; give at least 1m" });
  return problems;
}
