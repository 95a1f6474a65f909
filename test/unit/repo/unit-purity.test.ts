/**
 * "Unit" means no server, process or Java (docs/testing.md): the unit project starts no DynamoDB Local
 * and leases no database (vitest.config.ts), so `vitest run --project unit` is the fast half. A test
 * file under test/unit/ that imports what starts one fails here; it belongs in test/integration/.
 * Every import counts: static, `import type`, re-exports, dynamic `import()` and `require()`.
 */
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT, filesBelow } from "../../support/repo-files.js";

/** Modules a unit test may not import (repo paths without extension, or package names), and why. */
const FORBIDDEN: Readonly<Record<string, string>> = {
  "local/simulator/index": "startSimulator: the platform simulator, an HTTP server (its pure parts, such as local/simulator/runs.ts, are allowed)",
  "local/simulator/server": "the platform simulator's HTTP server",
  "local/runtime/dynamodb-local": "starts DynamoDB Local, a Java process",
  "local/runtime/moto": "starts moto_server, a child process",
  "local/receivers/slack-receiver": "the Slack test receiver, an HTTP server",
  "local/receivers/http-receivers": "the PagerDuty, webhook and Teams test receivers, HTTP servers",
  "local/cloud-local/http-api": "cloud-local's HTTP API, an HTTP server",
  "test/support/dynamodb": "tables on the run's DynamoDB Local, which the unit project does not start",
  "test/support/dynamodb-lease": "a database leased from the run's DynamoDB Local",
  "test/support/dynamodb-pool": "the DynamoDB Local pool's HTTP server",
  "test/support/dynamodb-setup": "the integration project's setup file: leases a database",
  "test/support/moto-bus": "an EventBridge bus on moto_server",
  "test/support/packaged-example": "runs `serverless package` on a copy of the project (child processes)",
  "test/support/smtp-receiver": "the SMTP test receiver, a server",
  "test/support/hostile-platform": "a hostile platform, an HTTP server",
  "test/support/lambda-async": "Lambda's Invoke API, an HTTP server",
  "test/support/receivers-model": "the whole pipeline: simulator, DynamoDB Local, receivers",
  "test/support/crash-run": "`lookout run` in a child process",
  "node:child_process": "child processes",
  child_process: "child processes",
};

/** Whether the file makes a server itself: a call of `createServer` (node:http, node:https, node:net, node:http2), bare or as a method. */
function makesServer(source: string): boolean {
  const visit = (node: ts.Node): boolean => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      if (name === "createServer") return true;
    }
    return ts.forEachChild(node, visit) ?? false;
  };
  return visit(ts.createSourceFile("x.ts", source, ts.ScriptTarget.Latest));
}

/** What `source` (the file at repo path `file`) may not do in a unit test: one line each, naming the import and why. */
function serverUses(file: string, source: string): string[] {
  const problems = ts
    .preProcessFile(source, true, true)
    .importedFiles.map((i) => i.fileName)
    .flatMap((spec) => {
      const key = spec.startsWith(".") ? posix.join(posix.dirname(file), spec).replace(/\.(js|ts|mjs|cjs)$/, "") : spec;
      const why = FORBIDDEN[key];
      return why === undefined ? [] : [`${file} imports ${spec}: ${why}`];
    });
  if (makesServer(source)) problems.push(`${file} calls createServer: a server of its own`);
  return problems;
}

describe("unit tests start no server, process or Java", () => {
  it("no file under test/unit/ imports what starts one", () => {
    const files = filesBelow("test/unit", ".test.ts");
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((f) => serverUses(f, readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
  });

  it("catches each kind: static, type-only, dynamic and require, by relative path from any folder, and createServer", () => {
    const f = "test/unit/poll/x.test.ts";
    expect(serverUses(f, 'import { startSimulator } from "../../../local/simulator/index.js";')).toHaveLength(1);
    expect(serverUses(f, 'import type { Simulator } from "../../../local/simulator/index.js";')).toHaveLength(1);
    expect(serverUses(f, 'const { freshTable } = await import("../../support/dynamodb.js");')).toHaveLength(1);
    expect(serverUses(f, 'export { leaseFileDatabase } from "../../support/dynamodb-lease.js";')).toHaveLength(1);
    expect(serverUses(f, 'const cp = require("node:child_process");')).toHaveLength(1);
    expect(serverUses(f, 'import { spawn } from "child_process";')).toHaveLength(1);
    expect(serverUses(f, 'import { startMoto } from "../../../local/runtime/moto.js";')).toHaveLength(1);
    expect(serverUses(f, 'import { examplePackage } from "../../support/packaged-example.js";')).toHaveLength(1);
    expect(serverUses(f, 'import { createServer } from "node:http";\nconst s = createServer(() => {});')).toEqual([`${f} calls createServer: a server of its own`]);
    expect(serverUses(f, 'import * as net from "node:net";\nnet.createServer().listen(0);')).toHaveLength(1);
    // Pure parts of the same folders, and a request from node:http, are not servers.
    expect(serverUses(f, 'import { planDeployment } from "../../../local/simulator/runs.js";\nimport { request } from "node:http";')).toEqual([]);
    expect(serverUses(f, 'import { slackMessageProblem } from "../../../local/receivers/block-kit.js";')).toEqual([]);
  });
});
