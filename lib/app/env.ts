/** What a deployed function reads from its environment (serverless.yml sets it). */
export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const v = env[name];
  if (!v) throw new Error(`environment variable ${name} is not set`);
  return v;
}
