// serverless.yml's `custom.lookout: ${file(./infra/from-config.cjs)}`: reads the configuration file
// (LOOKOUT_CONFIG, default lookout.yaml) at package time and returns what follows from it — the file to
// bundle and the generated CloudFormation (route rules, queue policies, one role per function, alarms).
// The logic is infra/stack.ts, loaded with tsx (a dependency of the project): nothing to build first.
"use strict";

const path = require("node:path");
const { require: tsxRequire } = require("tsx/cjs/api");

const serviceDir = path.resolve(__dirname, "..");
let cached;

module.exports = async ({ resolveVariable }) => {
  const stage = await resolveVariable("sls:stage");
  const service = await resolveVariable("self:service");
  const alarmEmail = await resolveVariable("param:alarmEmail");
  const region = await resolveVariable("self:provider.region");
  const secretsExtensionLayer = await resolveVariable("param:secretsExtensionLayer");
  const stack = tsxRequire("./stack.ts", __filename);
  const file = stack.configToPackage();
  const key = JSON.stringify([stage, service, alarmEmail, region, secretsExtensionLayer, file]);
  if (cached && cached.key === key) return cached.value;
  let value;
  try {
    value = stack.fromConfig(serviceDir, file, { service, stage, region, alarmEmail: alarmEmail || undefined, secretsExtensionLayer: secretsExtensionLayer || undefined });
  } catch (err) {
    // A configuration problem is one line that says what to change, not a stack trace.
    const known = err && (err.name === "ConfigError" || err.name === "DeployConfigError");
    if (!known) throw err;
    const hint = / not found$/.test(err.message) ? " (set LOOKOUT_CONFIG to the configuration to deploy, e.g. LOOKOUT_CONFIG=lookout.prod.yaml)" : "";
    const e = new Error(`Lookout configuration: ${err.message}${hint}`);
    e.stack = e.message;
    throw e;
  }
  cached = { key, value };
  return value;
};
