/**
 * cloud-local's copy of what SES delivered (docs/cloud-local.md): the Message-ID SES gives a message in
 * place of the sender's, as nodemailer's SES transport reports it and follow-ups reply to it.
 */
import { describe, expect, it } from "vitest";
import { asSesDelivers } from "../../local/cloud-local/run.js";

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
