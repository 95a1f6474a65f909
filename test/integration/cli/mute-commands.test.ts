import { beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { execFile } from "node:child_process";
import { buildMute, muteCommand, mutesCommand, unmuteCommand, MuteUsageError } from "../../../local/cli/mute-commands.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const now = new Date("2026-06-01T10:00:00Z");

describe("lookout mute arguments", () => {
  it("needs a scope, a reason and an end", () => {
    expect(() => buildMute({ config: "x", reason: "r", for: "1h" }, now)).toThrow(/say what to mute/);
    expect(() => buildMute({ config: "x", service: "api", for: "1h" }, now)).toThrow(/say why/);
    expect(() => buildMute({ config: "x", service: "api", reason: "r" }, now)).toThrow(/for how long/);
    expect(() => buildMute({ config: "x", service: "api", reason: "r", for: "soon" }, now)).toThrow(MuteUsageError);
    expect(() => buildMute({ config: "x", service: "api", reason: "r", until: "2020-01-01T00:00:00Z" }, now)).toThrow(/already past/);
  });

  it("refuses an end further than the longest retention (docs/limits.md): no date a store could hold", () => {
    for (const far of [{ for: "999999999999d" }, { for: "3651d" }, { until: "+275760-09-13T00:00:00Z" }, { until: "2036-06-01T10:00:01Z" }]) {
      expect(() => buildMute({ config: "x", service: "api", reason: "r", ...far }, now), JSON.stringify(far)).toThrow(/must be from 1ms to 3650d/);
    }
    expect(buildMute({ config: "x", service: "api", reason: "r", for: "3650d" }, now, "id").until).toBe("2036-05-29T10:00:00.000Z");
  });

  it("mutes a cluster or a webhook by its id, and says so when given a name", () => {
    const id = "3671EB7B-9FF9-4C73-8B93-D0B918EF0F4F";
    expect(buildMute({ config: "x", cluster: id, reason: "r", for: "1h" }, now, "c").scope).toEqual({ cluster: id.toLowerCase() });
    expect(buildMute({ config: "x", webhook: id, reason: "r", for: "1h" }, now, "w").scope).toEqual({ webhook: id.toLowerCase() });
    expect(() => buildMute({ config: "x", cluster: "prod-eu", reason: "r", for: "1h" }, now)).toThrow(/--cluster prod-eu: give the cluster's id/);
  });

  it("builds a mute that ends when asked", () => {
    const m = buildMute({ config: "x", service: "api-*", environment: "prod", reason: " deploy freeze ", for: "2h", by: "ann" }, now, "id-1");
    expect(m).toEqual({
      id: "id-1", scope: { environment: "prod", service: "api-*" }, until: "2026-06-01T12:00:00.000Z",
      reason: "deploy freeze", created_by: "ann", created_at: now.toISOString(),
    });
  });
});

describe("lookout mute, mutes, unmute on the local store", () => {
  let config: string;
  beforeAll(() => {
    process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint();
    process.env.LOOKOUT_TABLE = `mutes-${randomUUID().slice(0, 8)}`;
    const dir = mkdtempSync(join(tmpdir(), "lookout-mute-"));
    config = join(dir, "lookout.yaml");
    writeFileSync(config, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: 0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11 }]\ndata_dir: ${dir}\n`);
  });

  it("mutes, lists, unmutes", async () => {
    const out: string[] = [];
    const print = (l: string) => out.push(l);
    expect(await muteCommand({ config, service: "api", reason: "maintenance", for: "1h", by: "ann" }, print)).toBe(0);
    const id = /\(([0-9a-f-]{36})\)/.exec(out[0]!)![1]!;
    expect(await mutesCommand({ config }, print)).toBe(0);
    expect(out[1]).toContain(id);
    expect(out[1]).toContain("service=api");
    expect(out[1]).toContain("by ann: maintenance");
    expect(await unmuteCommand(id, { config }, print)).toBe(0);
    expect(await mutesCommand({ config }, print)).toBe(0);
    expect(out.at(-1)).toMatch(/no active mutes/);
    expect(await mutesCommand({ config, all: true }, print)).toBe(0);
    expect(out.at(-1)).toMatch(/lifted/);
    expect(await unmuteCommand(randomUUID(), { config }, print)).toBe(1);
  });

  it("--format json: one document each; what a name stands for is noted on stderr", async () => {
    const out: string[] = [];
    const notes: string[] = [];
    expect(await muteCommand({ config, environment: "nowhere", reason: "r", for: "1h", by: "ann", format: "json" }, (l) => out.push(l), (l) => notes.push(l))).toBe(0);
    const mute = JSON.parse(out[0]!) as { id: string; scope: object; active: boolean };
    expect(mute).toMatchObject({ scope: { environment: "nowhere" }, active: true, created_by: "ann" });
    expect(notes).toEqual([`lookout mute: note: no environment named "nowhere" is known yet; the mute matches it by name when one appears`]);
    expect(await mutesCommand({ config, format: "json" }, (l) => out.push(l))).toBe(0);
    expect((JSON.parse(out[1]!) as { mutes: Array<{ id: string }> }).mutes.map((m) => m.id)).toContain(mute.id);
    expect(await unmuteCommand(mute.id, { config, format: "json" }, (l) => out.push(l))).toBe(0);
    expect(JSON.parse(out[2]!)).toMatchObject({ id: mute.id, active: false, lifted_at: expect.any(String) });
  });

  it("starting DynamoDB Local shows on stderr, never on stdout: the JSON stays clean", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lookout-mute-embedded-"));
    const file = join(dir, "lookout.yaml");
    writeFileSync(file, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: 0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11 }]\ndata_dir: ${dir}\n`);
    const { DYNAMODB_ENDPOINT: _e, LOOKOUT_TABLE: _t, ...env } = process.env;
    const bin = new URL("../../../bin/lookout.mjs", import.meta.url).pathname;
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(process.execPath, [bin, "mutes", "--format", "json", "--config", file], { env, timeout: 180_000 }, (err, stdout, stderr) =>
        done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr })),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ mutes: [] });
    expect(r.stderr.split("\n").filter((l) => l && !l.startsWith("npm warn"))).toEqual(["starting DynamoDB Local…", expect.stringMatching(/^DynamoDB Local ready in \d+\.\ds$/)]);
  }, 200_000);
});
