import { describe, expect, it } from "vitest";
import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import { refusalOf } from "../../../lib/store/ingest-store.js";

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({ message: "Transaction cancelled", $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });

describe("a refused execution write, read per item", () => {
  it("is contention when the state lost a race, worth another read", () => {
    expect(refusalOf(cancelled("ConditionalCheckFailed", "None", "None"), 2)).toBe("contention");
    expect(refusalOf(cancelled("None", "ConditionalCheckFailed", "None"), 2)).toBe("contention");
    expect(refusalOf(cancelled("TransactionConflict", "None"), undefined)).toBe("contention");
    // The alert clashing as well as the state: another poller wrote both; read again.
    expect(refusalOf(cancelled("ConditionalCheckFailed", "None", "ConditionalCheckFailed"), 2)).toBe("contention");
    // A conflicting transaction on the alert item is a race too.
    expect(refusalOf(cancelled("None", "None", "TransactionConflict"), 2)).toBe("contention");
  });

  it("is an alert already recorded when only the alert's put found its id", () => {
    expect(refusalOf(cancelled("None", "None", "ConditionalCheckFailed"), 2)).toBe("alert_exists");
    expect(refusalOf(cancelled("None", "ConditionalCheckFailed"), 1)).toBe("alert_exists");
  });

  it("is neither for anything else, which is not retried as contention", () => {
    expect(refusalOf(cancelled("ThrottlingError", "None"), undefined)).toBe("other");
    expect(refusalOf(cancelled("ValidationError", "None", "ConditionalCheckFailed"), 2)).toBe("other");
    expect(refusalOf(cancelled(), undefined)).toBe("other");
    expect(refusalOf(new Error("socket hang up"), undefined)).toBe("other");
  });
});
