// serverless.yml's `custom.esbuild.plugins`: what packaging adds to esbuild for Lookout's bundles.
//  - The configuration, checked at package time, as JSON, and which receivers its fallback names, as
//    esbuild `define`s (infra/stack.ts packagedDefines; read by lib/app/cloud). The bundler then drops
//    the code they make unreachable: reading and checking the file (YAML, the schema), and the sender a
//    notify function cannot use. Per function (infra/stack.ts functionDefines): which kinds of secret
//    reference (SSM, Secrets Manager) its role lets it read through the extension's layer.
//  - The packages that code alone needs, marked free of side effects: left out when nothing calls them.
//    Their authors do not say so in package.json, so esbuild would keep them for their top-level code.
//  - The AWS SDK, bundled and tree-shaken: the tested version, and a module load two to four times
//    faster than the runtime's whole clients. LOOKOUT_RUNTIME_AWS_SDK=1 leaves it to the nodejs22.x
//    runtime instead (serverless.yml `exclude`), marked free of side effects so that a client nothing
//    calls is not imported: bundles under 250 KB that load slower (docs/deploy.md, "The AWS SDK";
//    both measured in BENCHMARKS.md).
//  - nodemailer's table of every file type, which names attachments (Lookout sends none), replaced by
//    infra/mail-mime-types.mjs: a smaller email function, measured in BENCHMARKS.md ("bundles").
//  - The AWS SDK's default credential chain, replaced by the environment's credentials alone
//    (infra/lambda-credentials.mjs): Lambda puts the role's there, so the other links are never reached,
//    and their chunks made esbuild load the Query and XML protocols at every cold start.
//  - The AWS SDK clients' schemas with their trait keys written as the strings they are
//    (infra/sdk-schema-keys.cjs): esbuild then drops the schema of every operation a function never
//    calls, which it must otherwise keep (a computed key it cannot see through).
//  - The chunks of code a function loads on demand (serverless.yml `splitting`), named after its bundle
//    (`notify-slack.ses-<hash>.mjs`): serverless-esbuild leaves `<another bundle>.*` out of a function's
//    zip, so each zip carries its own chunks and no other function's.
"use strict";

const path = require("node:path");
const { require: tsxRequire } = require("tsx/cjs/api");
const { sdkSchemaKeys } = require("./sdk-schema-keys.cjs");

const serviceDir = path.resolve(__dirname, "..");
/** Used only by the YAML file reader, the Slack sender and email (of nodemailer, the SES path takes its composer alone). */
const SIDE_EFFECT_FREE = /^(yaml|nodemailer|@slack\/web-api|@slack\/webhook)(\/.*)?$/;
const RUNTIME_SDK = /^@(aws-sdk|smithy)\//;
/** The SDK clients' import of their default credential chain. */
const CREDENTIAL_CHAIN = /^@aws-sdk\/credential-provider-node$/;
/** nodemailer's own import of its file-type table (its ESM and CommonJS builds). */
const MAIL_MIME_TYPES = /(^|\/)mime-types(\.js)?$/;
const runtimeSdk = () => process.env.LOOKOUT_RUNTIME_AWS_SDK === "1";

/** The bundle's name, `notify-slack` for functions/notify-slack.ts (serverless-esbuild builds one entry at a time). */
function entryName(build) {
  const entries = build.initialOptions.entryPoints ?? [];
  const [entry] = Array.isArray(entries) ? entries.map((e) => (typeof e === "string" ? e : e.in)) : Object.values(entries);
  return entry ? path.basename(entry, path.extname(entry)) : undefined;
}

/** The environment's credentials for the SDK's default chain; only where the SDK is bundled (the runtime's keeps its own). */
function lambdaCredentials() {
  return {
    name: "lookout-lambda-credentials",
    setup(build) {
      if (!runtimeSdk()) build.onResolve({ filter: CREDENTIAL_CHAIN }, () => ({ path: path.join(__dirname, "lambda-credentials.mjs") }));
    },
  };
}

module.exports = () => {
  const stack = tsxRequire("./stack.ts", __filename);
  const file = stack.configToPackage();
  const defines = stack.packagedDefines(serviceDir, file);
  const byFunction = stack.functionDefines(stack.loadDeployConfig(serviceDir, file).config);
  return [
    {
      name: "lookout-packaged-config",
      setup(build) {
        build.initialOptions.define = { ...build.initialOptions.define, ...defines, ...byFunction[entryName(build)] };
      },
    },
    {
      name: "lookout-aws-sdk",
      setup(build) {
        if (!runtimeSdk()) build.initialOptions.external = (build.initialOptions.external ?? []).filter((p) => !RUNTIME_SDK.test(p));
        else build.onResolve({ filter: RUNTIME_SDK }, (args) => ({ path: args.path, external: true, sideEffects: false }));
      },
    },
    {
      name: "lookout-chunks",
      setup(build) {
        const name = entryName(build);
        if (name) build.initialOptions.chunkNames = `${name}.[name]-[hash]`;
      },
    },
    lambdaCredentials(),
    sdkSchemaKeys(),
    {
      name: "lookout-mail-mime-types",
      setup(build) {
        build.onResolve({ filter: MAIL_MIME_TYPES }, (args) =>
          /[\\/]node_modules[\\/]nodemailer[\\/]/.test(args.importer) ? { path: path.join(__dirname, "mail-mime-types.mjs") } : undefined,
        );
      },
    },
    {
      name: "lookout-side-effect-free",
      setup(build) {
        build.onResolve({ filter: SIDE_EFFECT_FREE }, async (args) => {
          if (args.pluginData === SIDE_EFFECT_FREE) return undefined; // the resolution asked for below
          const resolved = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: SIDE_EFFECT_FREE });
          return resolved.errors.length ? undefined : { ...resolved, sideEffects: false };
        });
      },
    },
  ];
};

// The bundle bench builds its SDK floor the same way.
module.exports.lambdaCredentials = lambdaCredentials;
module.exports.sdkSchemaKeys = sdkSchemaKeys;
