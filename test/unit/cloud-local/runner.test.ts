/**
 * What cloud-local shows of the stack (docs/cloud-local.md): its copy of what SES delivered, with the
 * Message-ID SES gives a message in place of the sender's (as nodemailer's SES transport reports it and
 * follow-ups reply to it); and the ERROR lines the functions log, one line each for the terminal.
 */
import { describe, expect, it } from "vitest";
import { asSesDelivers } from "../../../local/cloud-local/runner.js";
import { loggedError } from "../../../local/cloud-local/lambda-container.js";

describe("a message as SES delivers it", () => {
  it("carries SES's Message-ID, folded or not, and keeps every other header and the body", () => {
    const raw = "From: a@example.com\r\nMessage-ID:\r\n <ours@example.com>\r\nSubject: s\r\n\r\nMessage-ID: <in the body>\r\n";
    expect(asSesDelivers(raw, "0100-abc", "us-east-1")).toBe(
      "From: a@example.com\r\nMessage-ID: <0100-abc@email.amazonses.com>\r\nSubject: s\r\n\r\nMessage-ID: <in the body>\r\n",
    );
    expect(asSesDelivers("Message-Id: <x@y>\nSubject: s\n\nbody", "id", "eu-west-1")).toBe("Message-ID: <id@eu-west-1.amazonses.com>\nSubject: s\n\nbody");
  });

  it("gives one to a message that had none", () => {
    expect(asSesDelivers("Subject: s\r\n\r\nbody", "id", "us-east-1")).toBe("Message-ID: <id@email.amazonses.com>\r\nSubject: s\r\n\r\nbody");
  });
});

describe("a function's logged ERROR, for the terminal", () => {
  it("is its message and its error's, on one line and clipped; other lines and other levels are not", () => {
    const line = JSON.stringify({ level: "ERROR", message: "poll failed", error: { name: "PlatformNetworkError", message: "getaddrinfo\nENOTFOUND platform.example" } });
    expect(loggedError(line)).toBe("poll failed (getaddrinfo ENOTFOUND platform.example)");
    expect(loggedError(JSON.stringify({ level: "ERROR", message: "x".repeat(1_000) }))!.length).toBe(300);
    expect(loggedError(JSON.stringify({ level: "WARN", message: "ERROR in the text" }))).toBeUndefined();
    expect(loggedError("REPORT RequestId: 1\tDuration: 1 ms ERROR")).toBeUndefined();
    expect(loggedError('{"level":"ERROR", broken')).toBeUndefined();
  });
});
