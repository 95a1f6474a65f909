/**
 * Secret references in the cloud: env:, ssm: (SecureString) and secretsmanager:, the last two read
 * through the AWS Parameters and Secrets Lambda Extension, a layer the packaging gives each function
 * whose role reads such a reference (infra/stack.ts functionLayers; docs/deploy.md, "Secrets"). The
 * extension keeps each value five minutes (SSM_PARAMETER_STORE_TTL, SECRETS_MANAGER_TTL in
 * serverless.yml; a container keeps what it composed with them, docs/deploy.md "Secrets"); and no function carries an SSM or
 * Secrets Manager client, which was a fifth of the module load of those that did (BENCHMARKS.md, "bundles").
 * The extension answers in the invoke phase only, not during init: the services that read secrets are
 * composed at a container's first invocation (container.ts `coldStart`), never at import.
 */
import { request } from "node:http";
import { ConfigError } from "../../config/error.js";
import { resolveSecret } from "../../config/secrets.js";

/** Set by the packaging, per function: whether its role reads ssm: / secretsmanager: references. Unpackaged: both. */
declare const LOOKOUT_SECRETS_SSM: boolean | undefined;
declare const LOOKOUT_SECRETS_SECRETSMANAGER: boolean | undefined;

/** The extension's port unless PARAMETERS_SECRETS_EXTENSION_HTTP_PORT says otherwise (the extension reads the same variable). */
const EXTENSION_PORT = 2773;
/** Longer than the extension takes to ask SSM or Secrets Manager itself. */
const EXTENSION_TIMEOUT_MS = 10_000;

/** A kind of reference this function's role may not read (nor has it the layer): said, not sent. */
const notPackaged = (scheme: string) => (name: string): Promise<string> =>
  Promise.reject(new ConfigError("packaging", "", `${scheme}:${name}: this function's role reads no ${scheme}: reference, so it was packaged without the Parameters and Secrets extension; package the stack again with this configuration`));

/**
 * GETs one answer from the extension. By hand on node:http, which the AWS SDK has loaded already: it is
 * one GET to localhost, and a client library would bring back the load this removes.
 */
export function extensionGet(
  path: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  what = path.split("?")[0],
): Promise<Record<string, unknown>> {
  const port = Number(env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? EXTENSION_PORT);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "localhost", port, path, method: "GET", headers: { "X-Aws-Parameters-Secrets-Token": env.AWS_SESSION_TOKEN ?? "" }, timeout: EXTENSION_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8");
          // `what` names the parameter or secret (a name, not a value); the answer says what failed, never a value.
          if (res.statusCode !== 200) return reject(new Error(`the Parameters and Secrets extension answered ${what} with ${res.statusCode}: ${body.slice(0, 300)}`));
          try {
            resolve(JSON.parse(body) as Record<string, unknown>);
          } catch {
            reject(new Error(`the Parameters and Secrets extension answered ${what} with no JSON`));
          }
        });
      },
    );
    req.on("timeout", () => req.destroy(new Error(`the Parameters and Secrets extension did not answer ${what} within ${EXTENSION_TIMEOUT_MS / 1000} s`)));
    req.on("error", (err: NodeJS.ErrnoException) =>
      reject(err.code === "ECONNREFUSED" ? new ConfigError("packaging", "", `nothing listens on localhost:${port}: the function has no Parameters and Secrets extension layer; deploy the stack as packaged (docs/deploy.md, "Secrets")`) : err),
    );
    req.end();
  });
}

/** An SSM parameter's value, decrypted. */
export async function extensionParameter(name: string, env?: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const answer = await extensionGet(`/systemsmanager/parameters/get?name=${encodeURIComponent(name)}&withDecryption=true`, env, `SSM parameter ${name}`);
  const value = (answer.Parameter as { Value?: unknown } | undefined)?.Value;
  return typeof value === "string" ? value : undefined;
}

/** A secret's current value: its string, or its binary as UTF-8. */
export async function extensionSecret(name: string, env?: Readonly<Record<string, string | undefined>>): Promise<string | undefined> {
  const answer = await extensionGet(`/secretsmanager/get?secretId=${encodeURIComponent(name)}`, env, `secret ${name}`);
  if (typeof answer.SecretString === "string") return answer.SecretString;
  return typeof answer.SecretBinary === "string" ? Buffer.from(answer.SecretBinary, "base64").toString("utf8") : undefined;
}

export function cloudSecret(ref: string): Promise<string> {
  const ssm = typeof LOOKOUT_SECRETS_SSM === "boolean" ? LOOKOUT_SECRETS_SSM : true;
  const secretsManager = typeof LOOKOUT_SECRETS_SECRETSMANAGER === "boolean" ? LOOKOUT_SECRETS_SECRETSMANAGER : true;
  return resolveSecret(ref, process.env, {
    ssm: ssm ? (name) => extensionParameter(name) : notPackaged("ssm"),
    secretsmanager: secretsManager ? (name) => extensionSecret(name) : notPackaged("secretsmanager"),
  });
}
