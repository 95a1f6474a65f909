#!/usr/bin/env node
// The `lookout` command: loads the TypeScript CLI through tsx, so it runs straight from a clone.
import { register } from "tsx/esm/api";

// Local runs are on Node 20; the deployed functions run nodejs22.x, where the SDK has nothing to warn about.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
register();
const { main } = await import("../local/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
