/**
 * What cloud-local shows of the stack (docs/cloud-local.md): its copy of what SES delivered, with the
 * Message-ID SES gives a message in place of the sender's (as nodemailer's SES transport reports it and
 * follow-ups reply to it); and the ERROR lines the functions log, one line each for the terminal.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { asSesDelivers, checkRehearsalConfig } from "../../../local/cloud-local/runner.js";
import { failureLines } from "../../../local/cli/shared.js";
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

describe("a configuration cloud-local is given, before anything starts", () => {
  it("one deploying refuses (a one-machine file's env: secrets) is a line per field, never a packaging stack trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "lookout-rehearsal-"));
    try {
      const file = join(dir, "lookout.yaml");
      writeFileSync(file, `platform: { url: "https://platform.example.com", token: "env:PLATFORM_API_TOKEN" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
routes: [{ name: a, slack: { channel: "#oncall", token: "env:SLACK_BOT_TOKEN" } }]
`);
      let thrown: unknown;
      try {
        checkRehearsalConfig(file, { PLATFORM_API_TOKEN: "t" });
      } catch (err) {
        thrown = err;
      }
      const suffix = "is read from the environment, which the deployed functions do not get; use ssm:/… (SecureString) or secretsmanager:… (cloud-local rehearses the deployed stack: deploying refuses it)";
      expect(failureLines("cloud-local", thrown)).toEqual([
        `lookout cloud-local: ${file}: platform.token: env:PLATFORM_API_TOKEN ${suffix}`,
        `lookout cloud-local: ${file}: routes[0].slack.token: env:SLACK_BOT_TOKEN ${suffix}`,
      ]);
      // With SSM references it passes, the token seeded from PLATFORM_API_TOKEN.
      writeFileSync(file, `platform: { url: "https://platform.example.com", token: "ssm:/lookout/platform-token" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
routes: [{ name: a, slack: { channel: "#oncall", token: "ssm:/lookout/slack" } }]
`);
      expect(checkRehearsalConfig(file, { PLATFORM_API_TOKEN: "t" }).routes).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
