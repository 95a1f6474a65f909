/**
 * An email client's view of one incident: its messages (opening, three follow-ups, the change list,
 * the close) rendered in order, sent through nodemailer's SMTP transport to a local smtp-server and
 * parsed back with mailparser, share one subject and reference the first message. With SES, which
 * replaces our Message-ID, follow-ups reply to the id it reported (moto_server).
 */
import { CreateEmailIdentityCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderEmail } from "../../../../lib/notify/email/render.js";
import { sesTransport, smtpTransport } from "../../../../lib/notify/email/transport.js";
import { CLOSE, DEPLOYMENT_INCIDENT, OPENING, renderIncidentEmails } from "../../../golden/incident-inputs.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../../local/runtime/moto.js";
import { type SmtpReceiver, startSmtpReceiver } from "../../../support/smtp-receiver.js";

const FROM = "Lookout <lookout@alerts.acme.io>";
const TO = ["oncall@acme.io"];
const asList = (refs: string | string[] | undefined) => (refs === undefined ? [] : Array.isArray(refs) ? refs : refs.split(/\s+/));

describe("an email client's view of one incident (SMTP)", () => {
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  afterAll(async () => smtp?.close());

  it("six messages, one subject, each replying to the first and referencing it", async () => {
    const t = smtpTransport(smtp.url);
    const sent: string[] = [];
    try {
      for (const m of renderIncidentEmails(DEPLOYMENT_INCIDENT, { from: FROM, to: TO })) sent.push((await t.send(m)).messageId);
    } finally {
      t.close();
    }
    const got = smtp.messages.map((m) => m.parsed);
    expect(got).toHaveLength(6);
    expect(new Set(got.map((p) => p.subject))).toEqual(new Set(["[Lookout] incident: api in storefront/production — deployment, opened 2026-03-02 14:07 UTC"]));

    const firstId = got[0]!.messageId!;
    expect(firstId).toBe(sent[0]); // SMTP keeps our Message-ID
    expect(got[0]!.inReplyTo).toBeUndefined();
    for (const [i, p] of got.entries()) {
      if (i === 0) continue;
      expect(p.inReplyTo).toBe(firstId);
      expect(asList(p.references)[0]).toBe(firstId);
      if (i > 1) expect(asList(p.references)).toContain(got[i - 1]!.messageId);
    }
    // A client that threads by References (JWZ) finds the first message as every message's root.
    const byId = new Map(got.map((p) => [p.messageId!, p]));
    for (const p of got) expect(byId.has(asList(p.references)[0] ?? p.messageId!)).toBe(true);

    expect(got.map((p) => p.headers.get("x-lookout-state"))).toEqual([
      "FAILED", "STILL FAILING", "STILL FAILING", "STILL FAILING", "CHANGES LISTED", "RECOVERED, resolved after 55m",
    ]);
    expect(new Set(got.map((p) => p.headers.get("x-lookout-incident")))).toEqual(new Set([OPENING.id]));
    expect(got[0]!.headers.get("x-lookout-severity")).toBe("critical");
    expect(got.at(-1)!.text).toContain("RECOVERED, resolved after 55m");
  });
});

const moto = motoAvailable();
if (!moto) console.warn(MOTO_ABSENT);

describe.skipIf(!moto)("SES: follow-ups reply to the Message-ID SES reported for the first message", () => {
  let server: MotoServer;
  let ses: SESv2Client;
  beforeAll(async () => {
    server = await startMoto();
    await server.reset();
    ses = new SESv2Client(server.clientConfig);
    await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: "alerts.acme.io" }));
  });
  afterAll(async () => {
    ses?.destroy();
    await server?.stop();
  });

  it("the close names SES's id in In-Reply-To and References", async () => {
    const t = sesTransport(ses);
    const opened = await t.send(renderEmail(OPENING, { from: FROM, to: TO }));
    expect(opened.messageId).toMatch(/@email\.amazonses\.com>$/);
    await t.send(renderEmail(CLOSE, { from: FROM, to: TO, incident: { first: OPENING, messageId: opened.messageId } }));
    const res = await fetch(`${server.endpoint}/moto-api/data.json`);
    const data = (await res.json()) as { ses?: { RawMessage?: { raw_data: string }[] } };
    const close = await simpleParser(data.ses!.RawMessage!.at(-1)!.raw_data);
    expect(close.inReplyTo).toBe(opened.messageId);
    expect(asList(close.references)).toEqual([opened.messageId]);
    expect(close.subject).toBe("[Lookout] incident: api in storefront/production — deployment, opened 2026-03-02 14:07 UTC");
  });
});
