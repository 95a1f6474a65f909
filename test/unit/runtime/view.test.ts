import { describe, expect, it } from "vitest";
import { deliveryLine } from "../../../local/runtime/view.js";
import { stringWidth } from "../../../lib/audit/output-formats.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";

const at = new Date("2026-11-23T10:00:00Z");
const delivery = { route: "default", receiver: "slack #ops", outcome: "sent" as const };
const withSummary = (summary: string) => ({ ...EXAMPLE_DETAILS["Deployment Failed"], summary });
const summaryOf = (line: string) => line.slice(line.indexOf("): ") + 3);

describe("the notify line of the terminal view", () => {
  it("shows a summary that fits whole, with no ellipsis", () => {
    const summary = "api in production answered HTTP 503";
    expect(summaryOf(deliveryLine(withSummary(summary), delivery, at))).toBe(summary);
    const exactly80 = "x".repeat(80);
    expect(summaryOf(deliveryLine(withSummary(exactly80), delivery, at))).toBe(exactly80);
  });

  it("cuts a long summary with a trailing … so a cut value never reads as another value", () => {
    // Cut at 80 characters with no mark, "HTTP 503" read as "HTTP 50".
    const summary = `${"a".repeat(62)} answered HTTP 503 to the health check`;
    const shown = summaryOf(deliveryLine(withSummary(summary), delivery, at));
    expect(stringWidth(shown)).toBe(80);
    expect(shown).toMatch(/ answered HTTP 50…$/);
  });

  it("cuts by terminal columns, not UTF-16 units: wide characters count 2, emoji are never split", () => {
    const shown = summaryOf(deliveryLine(withSummary(`${"部署".repeat(30)} 🚀🚀`), delivery, at));
    expect(stringWidth(shown)).toBeLessThanOrEqual(80);
    expect(shown.endsWith("…")).toBe(true);
    expect(shown).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });
});
