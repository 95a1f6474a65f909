/**
 * What the deployed functions share, built once per container (the cold start): the configuration
 * bundled with the code, the platform token from SSM or Secrets Manager, the clients and stores.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { getParameter } from "@aws-lambda-powertools/parameters/ssm";
import { getSecret } from "@aws-lambda-powertools/parameters/secrets";
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfigFile, resolveSecret, type Config } from "../lib/config/load.js";
import type { Log } from "../lib/model/log.js";
import { composeIngest, type Adapters, type IngestServices } from "../lib/app/ingest.js";
import { bundledConfigFile, requiredEnv } from "../lib/app/env.js";

export { requiredEnv };

export type CloudRuntime = IngestServices;

/** Powertools' Logger as the stages' `Log` port. */
export function asLog(logger: Logger): Log {
  return {
    info: (m, extra) => (extra ? logger.info(m, extra) : logger.info(m)),
    warn: (m, extra) => (extra ? logger.warn(m, extra) : logger.warn(m)),
    error: (m, extra) => (extra ? logger.error(m, extra) : logger.error(m)),
  };
}

/** The configuration file packaged beside the handlers (serverless.yml includes it). */
export function loadBundledConfig(): Config {
  return loadConfigFile(bundledConfigFile());
}

/** The token is cached for five minutes, so a rotated token is picked up without a redeploy. */
const SECRET_MAX_AGE_S = 300;

let runtime: Promise<CloudRuntime> | undefined;

export function cloudRuntime(logger: Logger): Promise<CloudRuntime> {
  runtime ??= build(logger).catch((err) => {
    runtime = undefined; // a failed cold start is tried again on the next invocation
    throw err;
  });
  return runtime;
}

/** Secret references in the cloud: env:, ssm: (SecureString) and secretsmanager:, cached for five minutes. */
export function cloudSecret(ref: string): Promise<string> {
  return resolveSecret(ref, process.env, {
    ssm: (name) => getParameter(name, { decrypt: true, maxAge: SECRET_MAX_AGE_S }),
    secretsmanager: async (name) => {
      const v = await getSecret(name, { maxAge: SECRET_MAX_AGE_S });
      return typeof v === "string" ? v : v === undefined ? undefined : Buffer.from(v as Uint8Array).toString("utf8");
    },
  });
}

/** The cloud's adapters: the table named by TABLE_NAME, secrets from SSM and Secrets Manager. */
export function cloudAdapters(logger: Logger): Adapters {
  return { dynamodb: new DynamoDBClient({}), tableName: requiredEnv("TABLE_NAME"), resolveSecret: cloudSecret, log: asLog(logger) };
}

function build(logger: Logger): Promise<CloudRuntime> {
  return composeIngest(loadBundledConfig(), cloudAdapters(logger));
}
