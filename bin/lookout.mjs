#!/usr/bin/env node
// The `lookout` command: loads the TypeScript CLI through tsx, so it runs straight from a clone.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../local/cli.ts");
process.exitCode = await main(process.argv.slice(2));
