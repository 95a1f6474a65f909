/**
 * What deploying refuses in a configuration that loads: what works on one machine but cannot in the
 * cloud. Packaging (infra/stack.ts, loadDeployConfig) builds only what passes; `lookout check-config
 * --deploy` and `lookout cloud-local --config` say it first, a problem a line at the field's path.
 */
import type { Config } from "./load.js";
import { ConfigError, type ConfigProblem } from "./error.js";
import { receiverSecretRefs } from "./routes.js";

const SSM_NAME = /^\/[A-Za-z0-9_.\-/]+$/;
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]+$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/;
export const SSM_NAME_PROBLEM = "not an SSM parameter name this stack can grant access to";
export const SECRET_NAME_PROBLEM = "not a Secrets Manager secret name or ARN";

/** Whether an `ssm:` or `secretsmanager:` reference names what an IAM policy can grant (infra/stack.ts); other kinds pass. */
export function grantableSecret(ref: string): boolean {
  const [scheme, ...rest] = ref.split(":");
  const name = rest.join(":");
  if (scheme === "ssm") return SSM_NAME.test(name);
  if (scheme === "secretsmanager") return SECRET_NAME.test(name) || SECRET_ARN.test(name);
  return true;
}

export function deployProblems(config: Config): ConfigProblem[] {
  const platform = { field: "platform.token", ref: config.platform.tokenRef };
  const receivers = receiverSecretRefs(config.routes, config.notify);
  // Read from an environment the deployed functions do not get (the SMTP URL is one machine's alone: the cloud sends through SES).
  const fromEnv = [platform, ...receivers.filter((r) => r.field !== "notify.email.smtp_url")].filter((r) => r.ref.startsWith("env:"));
  const problems: ConfigProblem[] = fromEnv.map(({ field, ref }) => ({
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
  // The functions' roles grant exactly the secrets the file names: a name no policy can hold is refused.
  const signing = config.notify.slackActions?.signingSecretRef;
  for (const { field, ref } of [platform, ...(signing ? [{ field: "notify.slack_actions.signing_secret", ref: signing }] : []), ...receivers]) {
    if (!grantableSecret(ref)) problems.push({ field, problem: `${ref}: ${ref.startsWith("ssm:") ? SSM_NAME_PROBLEM : SECRET_NAME_PROBLEM}` });
  }
  // Dispatch's tick (once a minute) flushes held digests: a shorter bound cannot be kept there.
  if (config.notify.digestWithinMs < 60_000) problems.push({ field: "notify.digest_within", problem: "the cloud flushes digests once a minute; give at least 1m" });
  return problems;
}

/** What deploying refuses, for a command that says it before packaging would: each problem at its field in `source`, saying `why`. */
export function deployRefusal(source: string, problems: readonly ConfigProblem[], why = "deploying refuses it"): ConfigError | undefined {
  return problems.length ? ConfigError.of(source, problems.map((p) => ({ ...p, problem: `${p.problem} (${why})` }))) : undefined;
}
