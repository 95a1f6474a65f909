// An esbuild plugin for the AWS SDK clients' schemas (`@aws-sdk/client-*/dist-es/schemas/*.js`).
//
// Each operation's schema is a top-level array such as
//   export var ListLayers$ = [9, n0, _LL, { [_h]: ["GET", "/2018-10-31/layers", 200] }, () => …];
// whose traits are keyed by a module constant (`const _h = "http";`). esbuild keeps every such array,
// used or not: a computed key that is an identifier may run code (a toString), so it counts as a side
// effect. With the key written as its string (`{ ["http"]: … }`, the same object) esbuild drops what no
// command reaches. For a REST client that is most of the file: the Lambda client's schemas fall from
// 69 to 32 KB in dispatch, SES v2's from 60 to 17 KB in the email function (BENCHMARKS.md, "bundles").
// No library does this; esbuild has no option for it (its tree shaking is deliberately conservative here).
//
// Only identifiers the same file declares at top level as `const _x = "…";` are replaced, and only
// where they are a computed key (`[_x]:`): these generated files declare nothing else by those names.
"use strict";

const { readFile } = require("node:fs/promises");

const SCHEMA_FILE = /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/][^\\/]+\.js$/;
const STRING_CONST = /^const (_[A-Za-z0-9_$]*) = ("(?:[^"\\\n]|\\.)*");$/gm;
const COMPUTED_KEY = /\[(_[A-Za-z0-9_$]*)\]:/g;

/** The schema file's source with each computed key that names a string constant written as that string. */
function withStringKeys(source) {
  const strings = new Map([...source.matchAll(STRING_CONST)].map((m) => [m[1], m[2]]));
  return source.replace(COMPUTED_KEY, (key, name) => (strings.has(name) ? `[${strings.get(name)}]:` : key));
}

function sdkSchemaKeys() {
  return {
    name: "lookout-sdk-schema-keys",
    setup(build) {
      build.onLoad({ filter: SCHEMA_FILE }, async (args) => ({ contents: withStringKeys(await readFile(args.path, "utf8")), loader: "js" }));
    },
  };
}

module.exports = { sdkSchemaKeys, withStringKeys };
