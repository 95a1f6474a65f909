#!/usr/bin/env node
// Runs a TypeScript entry point with tsx's loader, so `npm start` needs no build step on a fresh clone.
import { register } from "tsx/esm/api";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
register();
const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error("usage: run-ts.mjs <file.ts> [args…]");
  process.exit(2);
}
process.argv = [process.argv[0], resolve(entry), ...rest];
await import(pathToFileURL(resolve(entry)).href);
