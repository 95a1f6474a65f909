/**
 * Secret references in the cloud: env:, ssm: (SecureString) and secretsmanager:, each cached five minutes.
 * A function carries the client of a kind only when its role may read a reference of that kind: the
 * packaging says which (infra/stack.ts functionDefines), and the bundler leaves the other out.
 */
import { getParameter } from "@aws-lambda-powertools/parameters/ssm";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { ConfigError } from "../../config/error.js";
import { resolveSecret } from "../../config/secrets.js";

/** Set by the packaging, per function: whether its role reads ssm: / secretsmanager: references. Unpackaged: both. */
declare const LOOKOUT_SECRETS_SSM: boolean | undefined;
declare const LOOKOUT_SECRETS_SECRETSMANAGER: boolean | undefined;

/** A rotated token is picked up within five minutes, without a redeploy. */
const SECRET_MAX_AGE_S = 300;

/** A kind of reference this function's role may not read (nor could it): said, not sent. */
const notPackaged = (scheme: string) => (name: string): Promise<string> =>
  Promise.reject(new ConfigError("packaging", "", `${scheme}:${name}: this function's role reads no ${scheme}: reference, so it was packaged without that client; package the stack again with this configuration`));

export function cloudSecret(ref: string): Promise<string> {
  const ssm = typeof LOOKOUT_SECRETS_SSM === "boolean" ? LOOKOUT_SECRETS_SSM : true;
  const secretsManager = typeof LOOKOUT_SECRETS_SECRETSMANAGER === "boolean" ? LOOKOUT_SECRETS_SECRETSMANAGER : true;
  return resolveSecret(ref, process.env, {
    ssm: ssm ? (name) => getParameter(name, { decrypt: true, maxAge: SECRET_MAX_AGE_S }) : notPackaged("ssm"),
    secretsmanager: secretsManager
      ? async (name) => {
          const v = await getSecret(name, { maxAge: SECRET_MAX_AGE_S });
          return typeof v === "string" ? v : v === undefined ? undefined : Buffer.from(v as Uint8Array).toString("utf8");
        }
      : notPackaged("secretsmanager"),
  });
}
