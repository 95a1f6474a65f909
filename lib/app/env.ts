/** What a deployed function reads from its environment (serverless.yml sets it). */
export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const v = env[name];
  if (!v) throw new Error(`environment variable ${name} is not set`);
  return v;
}

/** The configuration file packaged beside the handlers (serverless.yml includes it), or LOOKOUT_CONFIG_FILE. */
export const bundledConfigFile = (env: NodeJS.ProcessEnv = process.env): string =>
  env.LOOKOUT_CONFIG_FILE ?? `${env.LAMBDA_TASK_ROOT ?? "."}/lookout.yaml`;
