/**
 * The configuration a deployed function runs with: the file packaged beside the handlers, which the
 * packaging checked and built into each bundle as the checked configuration, in JSON
 * (infra/esbuild-plugins.cjs, infra/stack.ts packagedDefines). A function takes it as it is: no YAML
 * parser, and no schema built or checked at its cold start — the same loader checked the same file when
 * it was packaged, and nothing in Lambda's environment changes it. Without the packaging (tests, tsx)
 * the file itself is read and checked.
 */
import type { Config } from "../../config/load.js";
import { bundledConfigFile } from "../env.js";

/** Set by the packaging (esbuild `define`): the checked configuration, less its `source`, as JSON text. */
declare const LOOKOUT_PACKAGED_CONFIG: string | undefined;

export async function packagedConfig(env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const file = bundledConfigFile(env);
  // One conditional expression, so that the bundler drops the loader (the schema, YAML) with the branch
  // the packaging makes unreachable.
  return typeof LOOKOUT_PACKAGED_CONFIG === "string"
    ? { ...(JSON.parse(LOOKOUT_PACKAGED_CONFIG) as Omit<Config, "source">), source: file }
    : (await import("../../config/load.js")).loadConfigFile(file, env);
}
