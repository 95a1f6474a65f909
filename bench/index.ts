/**
 * `npm run bench [-- SECTION… | --only A,B]`: runs the benchmarks, prints their figures and writes
 * BENCHMARKS.md. A partial run rewrites only its own sections of the file and keeps the others.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { resolve } from "node:path";
import { benchIngest } from "./ingest.js";
import { benchDetectionLatency } from "./latency.js";
import { benchAlertLatency } from "./e2e.js";
import { benchAuditQueries } from "./audit.js";
import { benchReport } from "./report.js";
import { benchBundles } from "./bundles.js";
import { benchLoad } from "./load.js";
import { benchKills } from "./kills.js";
import { benchProperty } from "./property.js";
import { benchCost } from "./cost.js";
import { benchFlood } from "./flood.js";
import { benchFloodIngest } from "./flood-ingest.js";
import { benchReceivers } from "./receivers.js";
import { benchCi } from "./ci.js";
import { renderReport, renderSection } from "./markdown.js";
import { figures, machine, report, section, sections, stopDynamo } from "./support.js";

const BENCHES: ReadonlyArray<readonly [string, () => Promise<void>]> = [
  ["ingest", benchIngest],
  ["detection", benchDetectionLatency],
  ["e2e", benchAlertLatency],
  ["audit", benchAuditQueries],
  ["report", benchReport],
  ["bundles", benchBundles],
  ["load", benchLoad],
  ["kills", benchKills],
  ["property", benchProperty],
  ["cost", benchCost],
  ["flood", benchFlood],
  ["flood-ingest", benchFloodIngest],
  ["receivers", benchReceivers],
  ["ci", benchCi],
];
const ORDER = BENCHES.map(([id]) => id);
const OUT = resolve(import.meta.dirname, "..", "BENCHMARKS.md");

const args = process.argv.slice(2).flatMap((a) => (a.startsWith("--only=") ? a.slice(7) : a === "--only" ? [] : a).toString().split(",")).filter(Boolean);
const unknown = args.filter((a) => !ORDER.includes(a));
if (unknown.length) {
  console.error(`bench: unknown section ${unknown.join(", ")}; sections: ${ORDER.join(", ")}`);
  process.exit(2);
}
const selected = args.length ? ORDER.filter((id) => args.includes(id)) : ORDER;
const when = new Date().toISOString().slice(0, 10);
const where = machine();
const started = performance.now();
const fresh = new Map<string, string>();

console.log(`Lookout benchmarks — ${when} — ${where}`);
try {
  for (const [id, run] of BENCHES.filter(([id]) => selected.includes(id))) {
    // A stand-in until the bench names its section, so that an early failure is filed under it.
    section({ id, title: id, method: "(the section stopped before it began)" }, true);
    // Other work on the machine moves wall-clock figures: say how busy it was.
    const load = `1-minute load average ${os.loadavg()[0]!.toFixed(1)} as it began`;
    try {
      await run();
    } catch (err) {
      // One section failing (packaging, say) is written into the report; the others still run.
      report({ name: "this section failed", value: (err as Error).message.split("\n")[0]!, method: "the error it stopped with; rerun it alone to see the rest" });
      process.exitCode = 1;
    } finally {
      // DynamoDB Local slows as it fills: each section starts on a fresh one (4 s), as its figures assume.
      await stopDynamo();
    }
    fresh.set(id, renderSection(sections.get(id)!, figures.filter((f) => f.section === id), when, `${where}; ${load}`));
  }
} finally {
  await stopDynamo();
}

const minutes = ((performance.now() - started) / 60_000).toFixed(1);
const header = [
  "# Benchmarks",
  "",
  `Written by \`npm run bench\` (bench/index.ts). Last run ${when}: ${selected.length === ORDER.length ? "every section" : `sections ${selected.join(", ")}`}, ` +
    `${minutes} min, on ${where}.`,
  "",
  `\`npm run bench\` runs every section and rewrites this file. \`npm run bench -- e2e bundles\` (or \`--only e2e,bundles\`) reruns only those ` +
    `sections and keeps the others as they were, so each section says when and on what it was measured. Sections: ${ORDER.join(", ")}. ` +
    "Every figure is from one run on one machine; wall-clock figures move with the machine's load.",
].join("\n");
writeFileSync(OUT, renderReport({ order: ORDER, fresh, previous: existsSync(OUT) ? readFileSync(OUT, "utf8") : undefined, header }));
console.log(`\nwrote ${OUT} (${selected.join(", ")}) in ${minutes} min`);
