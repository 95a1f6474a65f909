/** Secret references in the cloud: env:, ssm: (SecureString) and secretsmanager:, each cached five minutes. */
import { getParameter } from "@aws-lambda-powertools/parameters/ssm";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { resolveSecret } from "../../config/secrets.js";

/** A rotated token is picked up within five minutes, without a redeploy. */
const SECRET_MAX_AGE_S = 300;

export function cloudSecret(ref: string): Promise<string> {
  return resolveSecret(ref, process.env, {
    ssm: (name) => getParameter(name, { decrypt: true, maxAge: SECRET_MAX_AGE_S }),
    secretsmanager: async (name) => {
      const v = await getSecret(name, { maxAge: SECRET_MAX_AGE_S });
      return typeof v === "string" ? v : v === undefined ? undefined : Buffer.from(v as Uint8Array).toString("utf8");
    },
  });
}
