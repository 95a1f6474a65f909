/**
 * A `lookout run --once` killed with SIGKILL at a chosen step: after its CRASH_AFTER-th call to DynamoDB
 * or its stream has landed (the write is in the table, the process never learns it). The receivers model
 * (test/support/receivers-model.ts) uses it for "a crash at a random step"; a run that needs fewer
 * calls ends normally.
 *
 *   CRASH_CONFIG: the configuration as written (JSON); CRASH_AFTER: the call count; NOW: simulated ISO
 *   time; and the environment the configuration's secrets and DYNAMODB_ENDPOINT / LOOKOUT_TABLE name.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { checkConfig } from "../../lib/config/load.js";
import { runLookout } from "../../local/runtime/run.js";

const env = process.env;
const after = Number(env.CRASH_AFTER);
let calls = 0;
// Every AWS SDK client (DynamoDB, its document client, its streams) sends through the SDK's base class,
// DynamoDBClient's parent.
const base = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...a: unknown[]) => Promise<unknown> };
const send = base.send;
base.send = async function (this: unknown, ...args: unknown[]) {
  const res = await send.apply(this, args);
  if (++calls >= after) process.kill(process.pid, "SIGKILL");
  return res;
};

const config = checkConfig(JSON.parse(env.CRASH_CONFIG!), "crash-run", {});
const silent = { info() {}, warn() {}, error() {} };
const summary = await runLookout({ config, env, once: true, log: silent, print: () => {}, now: () => new Date(env.NOW!) });
if (env.CRASH_DEBUG) console.log(JSON.stringify(summary));
console.log(`ended after ${calls} calls`);
