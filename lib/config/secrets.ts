/** Secret references (`env:NAME`, `ssm:/path`, `secretsmanager:name`) turned into their secrets. */
import { ConfigError } from "./error.js";

/** Turns a secret reference into the secret. `ssm:` and `secretsmanager:` need a resolver (the cloud's). */
export async function resolveSecret(
  ref: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  resolvers: Partial<Record<"ssm" | "secretsmanager", (name: string) => Promise<string | undefined>>> = {},
): Promise<string> {
  const [scheme, ...rest] = ref.split(":");
  const name = rest.join(":");
  if (scheme === "env") {
    const value = env[name];
    // No field path: the same reference may be the platform token, a Slack receiver or the SMTP URL.
    if (!value) throw new ConfigError("environment", "", `${name} is not set; export it (the configuration reads ${ref})`);
    return value;
  }
  const resolver = resolvers[scheme as "ssm" | "secretsmanager"];
  if (!resolver) throw new ConfigError("configuration", "", `${ref}: ${scheme}: secrets can only be read in the cloud; use env:NAME on one machine`);
  const value = await resolver(name);
  if (!value) throw new ConfigError(scheme!, "", `${name} is empty or missing`);
  return value;
}
