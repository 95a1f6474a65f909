// The runtime inside one cloud-local function container (docs/cloud-local.md): what Lambda's Node.js
// runtime does for a function — import the handler the template names from the task root (init, once),
// then run one event at a time with a Lambda context and answer with the handler's result or its error
// as Lambda reports it. Plain JavaScript: it runs with the bare `node` of a container, no tsx.
// `node bootstrap.mjs <handler>`, cwd the task root; events come over the IPC channel the host opened.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.env.LAMBDA_TASK_ROOT ?? process.cwd();
const [handlerSpec = ""] = process.argv.slice(2);

/** Lambda's own resolution: `dir/file.export`, the file tried as .js, .mjs, .cjs. */
async function loadHandler() {
  const dot = handlerSpec.lastIndexOf(".");
  if (dot < 1) throw Object.assign(new Error(`Bad handler ${handlerSpec}: expected FILE.EXPORT`), { name: "Runtime.MalformedHandlerName" });
  const base = handlerSpec.slice(0, dot);
  const name = handlerSpec.slice(dot + 1);
  const file = [".js", ".mjs", ".cjs"].map((ext) => join(root, base + ext)).find((f) => existsSync(f));
  if (!file) throw Object.assign(new Error(`Cannot find module '${base}' in ${root}`), { name: "Runtime.ImportModuleError" });
  let mod;
  try {
    mod = await import(pathToFileURL(file).href);
  } catch (err) {
    throw Object.assign(new Error(`${err?.name ?? "Error"}: ${err?.message ?? err}`), { name: "Runtime.ImportModuleError" });
  }
  const handler = mod[name] ?? mod.default?.[name];
  if (typeof handler !== "function") throw Object.assign(new Error(`${base}.${name} is undefined or not exported`), { name: "Runtime.HandlerNotFound" });
  return handler;
}

const errorOf = (err) => ({ errorType: err?.name ?? "Error", errorMessage: String(err?.message ?? err) });

const started = Date.now();
let handler;
let initError;
try {
  handler = await loadHandler();
} catch (err) {
  initError = errorOf(err);
}
process.send?.({ type: "ready", initMs: Date.now() - started, ...(initError ? { error: initError } : {}) });

// The host is gone (it stopped, or was killed): a container does not outlive its runner.
process.on("disconnect", () => process.exit(0));
// Ctrl-C at the terminal reaches the whole process group: the runner stops its containers itself.
process.on("SIGINT", () => undefined);

process.on("message", async (msg) => {
  if (msg?.type !== "invoke") return;
  if (initError) return process.send?.({ type: "result", id: msg.id, ok: false, ...initError });
  const context = {
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION ?? "$LATEST",
    invokedFunctionArn: msg.functionArn,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: msg.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, msg.deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
  try {
    const result = await handler(JSON.parse(msg.event), context);
    // Lambda answers with the result serialized as JSON; undefined is null.
    process.send?.({ type: "result", id: msg.id, ok: true, payload: JSON.stringify(result ?? null), maxRssKb: process.resourceUsage().maxRSS });
  } catch (err) {
    process.send?.({ type: "result", id: msg.id, ok: false, ...errorOf(err), maxRssKb: process.resourceUsage().maxRSS });
  }
});
