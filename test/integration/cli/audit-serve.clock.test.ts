/**
 * `lookout audit --serve` on a folder the demo wrote: served on the demo's clock (local/runtime/data-clock.ts),
 * as `lookout audit` and `report` read it — a report's window ends at that clock's now, not the wall clock's.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { auditServeCommand } from "../../../local/cli/audit-commands.js";
import { writeDataClock } from "../../../local/runtime/data-clock.js";
import { dynamodbEndpoint } from "../../support/dynamodb.js";

const DAY = 86_400_000;

describe("audit --serve on the demo's folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "lookout-serve-clock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers a report whose window ends at the folder's clock", async () => {
    const config = join(dir, "lookout.yaml");
    writeFileSync(config, `platform: { url: "http://127.0.0.1:1", token: "env:T" }\nwatch: [{ organization: ${randomUUID()} }]\ndata_dir: ${dir}\n`);
    writeDataClock(dir, { at: new Date(Date.now() + 3 * DAY), speed: 1 });
    const env = { DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT, LOOKOUT_TABLE: process.env.LOOKOUT_TABLE };
    process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint();
    process.env.LOOKOUT_TABLE = `serve-clock-${randomUUID().slice(0, 8)}`;
    const stop = new AbortController();
    const lines: string[] = [];
    let served: Promise<number> | undefined;
    try {
      const url = await new Promise<string>((resolve) => {
        served = auditServeCommand({ config, port: "0" }, { out: (l) => { lines.push(l); resolve(/at (\S+)/.exec(l)?.[1] ?? ""); }, err: (l) => void lines.push(l) }, { signal: stop.signal });
      });
      const report = (await (await fetch(`${url}report?since=1d`)).json()) as { period: { to: string } };
      expect(Date.parse(report.period.to)).toBeGreaterThan(Date.now() + 2 * DAY);
      expect(lines.some((l) => l.includes("the demo's clock"))).toBe(true);
    } finally {
      stop.abort();
      expect(await served).toBe(0);
      for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  });
});
