/**
 * Secrets in the cloud come through the Parameters and Secrets extension (lib/app/cloud/secrets.ts,
 * docs/deploy.md "Secrets"): the functions' reads against cloud-local's extension, which answers from
 * SSM and Secrets Manager on moto_server — a SecureString decrypted, a secret's string and its binary —
 * and every way it can go wrong says what went wrong without the value: a wrong session token, a missing
 * parameter, no extension at all.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PutParameterCommand, SSMClient } from "@aws-sdk/client-ssm";
import { CreateSecretCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { extensionParameter, extensionSecret } from "../../../lib/app/cloud/secrets.js";
import { ConfigError } from "../../../lib/config/error.js";
import { hasSecretsExtension, type SecretsExtension, startSecretsExtension } from "../../../local/cloud-local/secrets-extension.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../local/runtime/moto.js";

const available = motoAvailable();
if (!available) console.warn(MOTO_ABSENT);

let moto: MotoServer;
let ssm: SSMClient;
let secrets: SecretsManagerClient;
let extension: SecretsExtension;
const prefix = `/lookout/test-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  if (!available) return;
  moto = await startMoto();
  ssm = new SSMClient(moto.clientConfig);
  secrets = new SecretsManagerClient(moto.clientConfig);
  extension = await startSecretsExtension({ ssm, secrets });
});

afterAll(async () => {
  await extension?.close();
  ssm?.destroy();
  secrets?.destroy();
  await moto?.stop();
});

/** A port nothing listens on: one just freed. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!available)("secrets through the Parameters and Secrets extension", () => {
  it("reads an SSM SecureString decrypted, a secret's string and a secret's binary", async () => {
    await ssm.send(new PutParameterCommand({ Name: `${prefix}/platform-token`, Value: "tok-ssm-1", Type: "SecureString" }));
    await secrets.send(new CreateSecretCommand({ Name: `${prefix}/slack-bot`, SecretString: "xoxb-secret-2" }));
    await secrets.send(new CreateSecretCommand({ Name: `${prefix}/binary`, SecretBinary: Buffer.from("https://hooks.example/b") }));
    expect(await extensionParameter(`${prefix}/platform-token`, extension.env)).toBe("tok-ssm-1");
    expect(await extensionSecret(`${prefix}/slack-bot`, extension.env)).toBe("xoxb-secret-2");
    expect(await extensionSecret(`${prefix}/binary`, extension.env)).toBe("https://hooks.example/b");
    // Names with characters a query string must escape.
    await ssm.send(new PutParameterCommand({ Name: `${prefix}/a+b=c`, Value: "plus", Type: "SecureString" }));
    expect(await extensionParameter(`${prefix}/a+b=c`, extension.env)).toBe("plus");
  });

  it("says what failed, never the value: a wrong session token, a missing parameter or secret", async () => {
    await ssm.send(new PutParameterCommand({ Name: `${prefix}/guarded`, Value: "value-never-shown", Type: "SecureString" }));
    const wrongToken = await extensionParameter(`${prefix}/guarded`, { ...extension.env, AWS_SESSION_TOKEN: "not-the-session" }).catch((e: Error) => e);
    expect(String(wrongToken)).toContain(`extension answered SSM parameter ${prefix}/guarded with 401: missing or wrong X-Aws-Parameters-Secrets-Token`);
    expect(String(wrongToken)).not.toContain("value-never-shown");
    const missing = await extensionParameter(`${prefix}/no-such`, extension.env).catch((e: Error) => e);
    expect(String(missing)).toContain(`SSM parameter ${prefix}/no-such with 400: ParameterNotFound`);
    const missingSecret = await extensionSecret(`${prefix}/no-such-secret`, extension.env).catch((e: Error) => e);
    expect(String(missingSecret)).toMatch(new RegExp(`secret ${prefix}/no-such-secret with 4\\d\\d: ResourceNotFoundException`));
  });

  it("without the extension (no layer), a configuration error that says to deploy the stack as packaged", async () => {
    const port = await freePort();
    const err = await extensionParameter(`${prefix}/platform-token`, { PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port), AWS_SESSION_TOKEN: "t" }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(`nothing listens on localhost:${port}: the function has no Parameters and Secrets extension layer`);
  });

  it("knows the extension's layer by its published name, on either architecture", () => {
    expect(hasSecretsExtension(["arn:aws:lambda:us-east-1:177933569100:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:11"])).toBe(true);
    expect(hasSecretsExtension(["arn:aws:lambda:eu-west-1:015030872274:layer:AWS-Parameters-and-Secrets-Lambda-Extension:12"])).toBe(true);
    expect(hasSecretsExtension(["arn:aws:lambda:us-east-1:094274105915:layer:AWSLambdaPowertoolsTypeScriptV2:25"])).toBe(false);
    expect(hasSecretsExtension([])).toBe(false);
  });
});
