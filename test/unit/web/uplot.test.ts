/**
 * The audit page's charting library (npm `uplot`) is served from web/audit/ (packaged with the audit
 * API's function, served locally from the clone): its files there are the package's own, of the version
 * package.json names, so upgrading the dependency without copying its files again fails here.
 */
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> };
const FILES = [["web/audit/uplot.js", "dist/uPlot.iife.min.js"], ["web/audit/uplot.css", "dist/uPlot.min.css"], ["web/audit/uplot.LICENSE", "LICENSE"]] as const;

describe("uPlot in web/audit/", () => {
  it("is the version package.json pins, exactly", () => {
    const version = pkg.dependencies.uplot;
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(readFileSync("web/audit/uplot.js", "utf8").split("\n")[0]).toBe(`/*! https://github.com/leeoniya/uPlot (v${version}) */`);
    expect(readFileSync("web/audit/uplot.LICENSE", "utf8")).toMatch(/^The MIT License/);
  });

  it.skipIf(!existsSync("node_modules/uplot/package.json"))("is the installed package's files, byte for byte (cp them again after an upgrade)", () => {
    const installed = JSON.parse(readFileSync("node_modules/uplot/package.json", "utf8")) as { version: string };
    expect(installed.version).toBe(pkg.dependencies.uplot);
    for (const [served, own] of FILES) expect(readFileSync(served, "utf8"), served).toBe(readFileSync(`node_modules/uplot/${own}`, "utf8"));
  });
});
