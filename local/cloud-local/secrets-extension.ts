/**
 * The AWS Parameters and Secrets Lambda Extension, played for the containers of the functions that
 * have its layer: the two GETs the functions send it (lib/app/cloud/secrets.ts), answered from SSM and
 * Secrets Manager on moto_server with the extension's answer shapes (GetParameter's and
 * GetSecretValue's JSON), and its check of the `X-Aws-Parameters-Secrets-Token` header against the
 * container's session token. One for the stack; the real one runs in each execution environment and
 * caches (five minutes here, as serverless.yml sets) — here every request asks moto, so a changed
 * secret is seen at once.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { GetParameterCommand, type SSMClient } from "@aws-sdk/client-ssm";
import { GetSecretValueCommand, type SecretsManagerClient } from "@aws-sdk/client-secrets-manager";

/** The layer's name as AWS publishes it (any architecture, any version). */
const EXTENSION_LAYER = /:layer:AWS-Parameters-and-Secrets-Lambda-Extension(-Arm64)?:\d+$/;

export const hasSecretsExtension = (layers: readonly string[]): boolean => layers.some((l) => EXTENSION_LAYER.test(l));

export interface SecretsExtension {
  /** What a container with the layer gets: the port (the variable the extension itself reads) and its session token. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** The SDK's answer without its metadata: the JSON the service sent, which the extension passes on. */
const body = (out: { $metadata?: unknown }): string => {
  const { $metadata: _, ...rest } = out;
  return JSON.stringify(rest, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v instanceof Date ? v.getTime() / 1000 : v));
};

export async function startSecretsExtension(clients: { ssm: SSMClient; secrets: SecretsManagerClient }): Promise<SecretsExtension> {
  const token = randomUUID();
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const send = (status: number, text: string): void => void res.writeHead(status, { "content-type": status === 200 ? "application/json" : "text/plain" }).end(text);
    if (req.headers["x-aws-parameters-secrets-token"] !== token) return send(401, "missing or wrong X-Aws-Parameters-Secrets-Token header (the function's AWS_SESSION_TOKEN)");
    const url = new URL(req.url ?? "/", "http://localhost");
    try {
      if (req.method === "GET" && url.pathname === "/systemsmanager/parameters/get") {
        const name = url.searchParams.get("name");
        if (!name) return send(400, "name is required");
        return send(200, body(await clients.ssm.send(new GetParameterCommand({ Name: name, WithDecryption: url.searchParams.get("withDecryption") === "true" }))));
      }
      if (req.method === "GET" && url.pathname === "/secretsmanager/get") {
        const id = url.searchParams.get("secretId");
        if (!id) return send(400, "secretId is required");
        return send(200, body(await clients.secrets.send(new GetSecretValueCommand({ SecretId: id }))));
      }
      return send(404, `${req.method} ${url.pathname}: not an endpoint of the extension`);
    } catch (err) {
      // What the service answered, as the extension passes it on: its error's name and message.
      const e = err as Error & { $metadata?: { httpStatusCode?: number } };
      return send(e.$metadata?.httpStatusCode ?? 500, `${e.name}: ${e.message}`);
    }
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    env: { PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port), AWS_SESSION_TOKEN: token },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
