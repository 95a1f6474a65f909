/**
 * A platform token rotated in its store reaches a running process: the composed platform client reads the
 * store again after a 401 (lib/platform/client.ts `renewToken`, wired by lib/app/ingest.ts), so polls
 * recover without a restart or a new container (docs/deploy.md, "Secrets").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../../local/simulator/index.js";
import { parseConfig } from "../../../lib/config/load.js";
import { composeIngest } from "../../../lib/app/ingest.js";
import { pollSource } from "../../../lib/poll/poll.js";
import { freshTable } from "../../support/dynamodb.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(async () => {
  await sim?.close();
});

describe("a platform token rotated in its store", () => {
  it("fails polls while the store holds the rejected token, and is used from the next poll once it holds the new one", async () => {
    const { client: dynamodb, tableName } = await freshTable("token-renewal");
    const cluster = sim.ids.clusterIds[0]!;
    const config = parseConfig(
      `platform: { url: "${sim.url}", token: "env:T" }
watch: [{ organization: ${sim.ids.organizationId}, name: acme, clusters: [${cluster}] }]
`,
      "renewal.yaml",
    );
    let stored = "revoked-token";
    const reads: string[] = [];
    const resolveSecret = async (ref: string) => (reads.push(ref), stored);
    const { pollDeps } = await composeIngest(config, { dynamodb, tableName, resolveSecret, log: { info() {}, warn() {}, error() {} } });
    const poll = () => pollSource({ source: { kind: "cluster", organizationId: sim.ids.organizationId, id: cluster } }, pollDeps);

    const refused = await poll();
    expect(refused.ok).toBe(false);
    expect(refused.error?.kind).toBe("unauthenticated");
    expect(reads).toEqual(["env:T", "env:T"]); // composed, then read again after the 401

    stored = sim.apiToken; // rotated in the store; the process keeps running
    const recovered = await poll();
    expect(recovered.ok).toBe(true);
    expect(reads).toHaveLength(3);

    const after = await poll();
    expect(after.ok).toBe(true);
    expect(after.requests).toBe(1);
    expect(reads).toHaveLength(3); // the new token is kept
  });
});
