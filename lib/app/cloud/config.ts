/**
 * The configuration a deployed function runs with: the file packaged beside the handlers, which the
 * packaging also converts to JSON and builds into each bundle (infra/esbuild-plugins.cjs), so that no
 * YAML parser is loaded in Lambda. Without the packaging (tests, tsx) the file itself is read.
 */
import { checkConfig, loadConfigFile, type Config } from "../../config/load.js";
import { bundledConfigFile } from "../env.js";

/** Set by the packaging (esbuild `define`): the configuration file as JSON text. */
declare const LOOKOUT_PACKAGED_CONFIG: string | undefined;

export function packagedConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const file = bundledConfigFile(env);
  // Written out where it is used, so that the bundler drops the file reading (and YAML) it replaces.
  return typeof LOOKOUT_PACKAGED_CONFIG === "string" ? checkConfig(JSON.parse(LOOKOUT_PACKAGED_CONFIG), file, env) : loadConfigFile(file, env);
}
