import { describe, expect, it } from "vitest";
import { runSummaryText } from "../../../local/cli/run-command.js";

describe("the summary line of `lookout run` and `npm start`", () => {
  it("says the published count includes health events, so 0 alerts and 1 published do not contradict", () => {
    const text = runSummaryText({ polls: 4, requests: 9, newRecords: 0, alerts: 0, published: 1, failedPolls: 0 });
    expect(text).toBe("4 polls, 9 requests, 0 new records, 0 alerts raised by polls, 1 event published (health included)");
  });

  it("says what the run leaves to a later one: deliveries still owed, alerts held for a digest", () => {
    expect(runSummaryText({ polls: 1, requests: 1, newRecords: 1, alerts: 1, published: 1, failedPolls: 0, owed: 1, held: 3 })).toBe(
      "1 poll, 1 request, 1 new record, 1 alert raised by polls, 1 event published (health included); " +
        "1 event not yet delivered to every receiver: the next run retries (lookout status); 3 alerts held for a digest: a run within notify.digest_within sends it",
    );
  });

  it("counts one of a thing in the singular", () => {
    expect(runSummaryText({ polls: 1, requests: 1, newRecords: 1, alerts: 1, published: 2, failedPolls: 0 })).toBe(
      "1 poll, 1 request, 1 new record, 1 alert raised by polls, 2 events published (health included)",
    );
  });
});
