/**
 * Email transports against real receivers: SMTP (a local smtp-server), .eml files (parsed back), SES v2
 * on moto_server (what it captured, read from /moto-api/data.json); and the mapping of failures to
 * EmailDeliveryError's `retryable`.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { CreateEmailIdentityCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderEmail, renderEmailDigest } from "../../../../lib/notify/email/render.js";
import { classifySesError, classifySmtpError, fileTransport, sesTransport, smtpTransport } from "../../../../lib/notify/email/transport.js";
import { EmailDeliveryError, type EmailMessage } from "../../../../lib/notify/types.js";
import { DIGEST_WINDOW, FIRST, HOSTILE, RECOVERED, heldForDigest, hostile } from "../../../golden/inputs.js";
import { MOTO_ABSENT, type MotoServer, motoAvailable, startMoto } from "../../../../local/runtime/moto.js";
import { type SmtpReceiver, startSmtpReceiver } from "../../../support/smtp-receiver.js";

const FROM = "Lookout <lookout@alerts.acme.io>";
const TO = ["oncall@acme.io", "sre@acme.io"];
const first = renderEmail(FIRST, { from: FROM, to: TO });
const followUp = renderEmail(RECOVERED, { from: FROM, to: TO, incident: { first: FIRST } });

async function rejection(p: Promise<unknown>): Promise<EmailDeliveryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmailDeliveryError);
  return err as EmailDeliveryError;
}

describe("SMTP transport (nodemailer → local smtp-server)", () => {
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
  });
  afterAll(async () => smtp?.close());

  it("delivers one MIME message with the subject, a text and an HTML part, and the threading headers", async () => {
    const t = smtpTransport(smtp.url);
    try {
      const sent = await t.send(first);
      const sent2 = await t.send(followUp);
      expect(sent.messageId).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
      expect(sent2.messageId).toBe("<Zc5nV2mB8qL4tR7wE1yU3o@alerts.acme.io>");
    } finally {
      t.close();
    }
    expect(smtp.messages).toHaveLength(2);
    const [a, b] = smtp.messages as [(typeof smtp.messages)[0], (typeof smtp.messages)[0]];
    expect(a.from).toBe("lookout@alerts.acme.io");
    expect(a.to).toEqual(TO);
    expect(a.raw).toMatch(/Content-Type: multipart\/alternative/i);
    expect(a.parsed.subject).toBe("[Lookout] incident: api in storefront/production — deployment, opened 2026-03-02 14:07 UTC");
    expect(b.parsed.subject).toBe(a.parsed.subject);
    expect(a.parsed.text).toBe(first.text);
    expect(a.parsed.html).toBe(first.html);
    expect(a.parsed.messageId).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
    expect(a.parsed.headers.get("x-lookout-alert-id")).toBe(FIRST.id);
    expect(b.parsed.inReplyTo).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
    expect(b.parsed.references).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
  });

  it("hostile text arrives intact in the text part and escaped in the HTML part", async () => {
    const m = renderEmail(hostile(FIRST, HOSTILE), { from: FROM, to: TO });
    const t = smtpTransport(smtp.url);
    try {
      await t.send(m);
    } finally {
      t.close();
    }
    const got = smtp.messages.at(-1)!;
    expect(got.parsed.text).toContain("<!channel> *deploy*");
    expect(got.parsed.html).toContain("&lt;!channel&gt; *deploy*");
    expect(got.parsed.html).not.toContain("<!channel>");
  });

  it("a 4xx reply is retryable, a 5xx reply is not", async () => {
    const t = smtpTransport(smtp.url);
    try {
      // (both recipients: nodemailer delivers to the accepted ones when only some are refused)
      smtp.fail({ phase: "rcpt", code: 451, message: "try again later", times: TO.length });
      const soft = await rejection(t.send(first));
      expect(soft).toMatchObject({ retryable: true, status: 451 });
      smtp.fail({ phase: "data", code: 554, message: "message refused" });
      const hard = await rejection(t.send(first));
      expect(hard).toMatchObject({ retryable: false, status: 554 });
      expect(hard.message).toContain("message refused");
    } finally {
      t.close();
    }
  });

  it("a server that is not there is retryable", async () => {
    const gone = await startSmtpReceiver();
    const url = gone.url;
    await gone.close();
    const t = smtpTransport(url, { timeoutMs: 2_000 });
    const e = await rejection(t.send(first));
    t.close();
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(/ECONNECTION|ECONNREFUSED/);
  });

  it("a rejected login is not retryable and the password is not in the error", async () => {
    const auth = await startSmtpReceiver({ auth: { user: "lookout", pass: "pw-right" } });
    try {
      const ok = smtpTransport(auth.authUrl!);
      await ok.send(first);
      ok.close();
      expect(auth.messages).toHaveLength(1);
      const bad = smtpTransport(`smtp://lookout:sEcReT-pw@127.0.0.1:${auth.port}`);
      const e = await rejection(bad.send(first));
      bad.close();
      expect(e).toMatchObject({ retryable: false, status: 535 });
      expect(e.message).not.toContain("sEcReT-pw");
    } finally {
      await auth.close();
    }
  });
});

describe(".eml file transport", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "lookout-outbox-"));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("writes one RFC 5322 file per message, named <iso time>-<alert id>.eml", async () => {
    const now = new Date("2026-03-02T14:08:02.114Z");
    const t = fileTransport(join(dir, "outbox"), { now: () => now });
    const sent = await t.send(first);
    await t.send(followUp);
    const digest = renderEmailDigest(heldForDigest(), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to });
    await t.send(digest);
    const files = (await readdir(join(dir, "outbox"))).sort();
    expect(files).toEqual([
      "2026-03-02T14-08-02.114Z-Hq2b7XkP0vQm4sN9cT1eWa.eml",
      "2026-03-02T14-08-02.114Z-Zc5nV2mB8qL4tR7wE1yU3o.eml",
      `2026-03-02T14-08-02.114Z-${digest.headers!["X-Lookout-Alert-Id"]}.eml`,
    ].sort());
    expect(sent.messageId).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");

    const raw = await readFile(join(dir, "outbox", "2026-03-02T14-08-02.114Z-Zc5nV2mB8qL4tR7wE1yU3o.eml"), "utf8");
    expect(raw).toContain("\r\n");
    expect(raw.replace(/\r\n/g, "")).not.toContain("\n"); // CRLF only, as RFC 5322 says
    expect(raw).toMatch(/^Date: Mon, 02 Mar 2026 14:08:02 \+0000\r$/m);
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe(followUp.subject);
    expect(parsed.text).toBe(followUp.text);
    expect(parsed.html).toBe(followUp.html);
    expect(parsed.inReplyTo).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value.map((a) => a.address) : []).toEqual(TO);
  });

  it("an alert id cannot walk out of the directory", async () => {
    const m: EmailMessage = { ...first, headers: { ...first.headers, "X-Lookout-Alert-Id": "../../etc/passwd" } };
    const t = fileTransport(join(dir, "safe"), { now: () => new Date("2026-01-01T00:00:00Z") });
    await t.send(m);
    expect(await readdir(join(dir, "safe"))).toEqual(["2026-01-01T00-00-00.000Z-_.._etc_passwd.eml"]);
  });

  it("a directory that cannot be written is reported, not retryable", async () => {
    const t = fileTransport(join(dir, "safe", "2026-01-01T00-00-00.000Z-_.._etc_passwd.eml", "sub"));
    const e = await rejection(t.send(first));
    expect(e.retryable).toBe(false);
    expect(e.message).toMatch(/could not write .*: ENOTDIR/);
  });
});

const moto = motoAvailable();
if (!moto) console.warn(MOTO_ABSENT);

describe.skipIf(!moto)("SES v2 transport on moto_server", () => {
  let server: MotoServer;
  let ses: SESv2Client;
  beforeAll(async () => {
    server = await startMoto();
    await server.reset();
    ses = new SESv2Client(server.clientConfig);
    // moto, like SES in its sandbox, sends only from a verified identity
    await ses.send(new CreateEmailIdentityCommand({ EmailIdentity: "alerts.acme.io" }));
  });
  afterAll(async () => {
    ses?.destroy();
    await server?.stop();
  });

  async function captured(): Promise<{ raw_data: string; destinations: string[] }[]> {
    const res = await fetch(`${server.endpoint}/moto-api/data.json`);
    const data = (await res.json()) as { ses?: { RawMessage?: { raw_data: string; destinations: string[] }[] } };
    return data.ses?.RawMessage ?? [];
  }

  it("sends the raw MIME message: subject, both parts and our threading headers reach SES", async () => {
    const t = sesTransport(ses);
    const sent = await t.send(followUp);
    expect(sent.messageId).toMatch(/^<.+@email\.amazonses\.com>$/);
    const msgs = await captured();
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.destinations).toEqual(expect.arrayContaining(TO));
    const parsed = await simpleParser(msgs[0]!.raw_data);
    expect(parsed.subject).toBe(followUp.subject);
    expect(parsed.text).toBe(followUp.text);
    expect(parsed.html).toBe(followUp.html);
    expect(parsed.messageId).toBe("<Zc5nV2mB8qL4tR7wE1yU3o@alerts.acme.io>");
    expect(parsed.inReplyTo).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
    // RFC 5322 line ends throughout, as SES requires of a raw message
    expect(msgs[0]!.raw_data).not.toMatch(/[^\r]\n/);
  });

  it("SendEmail is sent again once at most when SES may have taken it unanswered; throttling is waited out", async () => {
    // In front of moto: each request forwarded, its answer held past the client's timeout (`late`), or
    // SES's throttling answered instead (`throttle`), as many times as asked.
    const faults: Array<"late" | "throttle"> = [];
    let requests = 0;
    const proxy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        requests++;
        const fault = faults.shift();
        if (fault === "throttle") {
          res.writeHead(429, { "content-type": "application/json", "x-amzn-errortype": "TooManyRequestsException" });
          return void res.end(JSON.stringify({ message: "Maximum sending rate exceeded." }));
        }
        const answer = await fetch(`${server.endpoint}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) });
        const body = Buffer.from(await answer.arrayBuffer());
        const send = () => {
          res.writeHead(answer.status, Object.fromEntries(answer.headers));
          res.end(body);
        };
        if (fault === "late") setTimeout(send, 1_000).unref();
        else send();
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()));
    const client = new SESv2Client({ ...server.clientConfig, endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, maxAttempts: 1, requestHandler: { requestTimeout: 200, throwOnRequestTimeout: true } });
    const t = sesTransport(client, { sleep: async () => {}, random: () => 0 });
    try {
      await server.reset();
      await client.send(new CreateEmailIdentityCommand({ EmailIdentity: "alerts.acme.io" }));
      requests = 0;
      faults.push("throttle", "throttle");
      await t.send(first);
      expect([requests, (await captured()).length]).toEqual([3, 1]);
      // SES took it and answered too late, once: sent again, and that one is answered.
      faults.push("late");
      await t.send(first);
      expect((await captured()).length).toBe(3);
      // Too late every time: two at most, then a failure the delivery retries later.
      faults.push("late", "late", "late", "late");
      const e = await rejection(t.send(first));
      expect(e.retryable).toBe(true);
      expect(e.message).toContain("it may have arrived");
      expect((await captured()).length).toBe(5);
    } finally {
      client.destroy();
      proxy.close();
    }
  });

  it("an unverified sender: MessageRejected, not retryable", async () => {
    const t = sesTransport(ses);
    const e = await rejection(t.send({ ...first, from: "lookout@not-verified.example" }));
    expect(e).toMatchObject({ retryable: false, status: 400 });
    expect(e.message).toContain("MessageRejected");
  });
});

describe("failure classification", () => {
  const sdkError = (name: string, status?: number, extra: object = {}) =>
    Object.assign(new Error(`${name} happened`), { name, ...(status ? { $metadata: { httpStatusCode: status } } : {}), ...extra });

  it.each([
    ["TooManyRequestsException", 429, true],
    ["Throttling", 400, true],
    ["LimitExceededException", 400, true],
    ["InternalFailure", 500, true],
    ["ServiceUnavailable", 503, true],
    ["MessageRejected", 400, false],
    ["MailFromDomainNotVerifiedException", 400, false],
    ["AccountSuspendedException", 400, false],
    ["BadRequestException", 400, false],
    ["SomethingNew", 403, false],
  ])("SES %s (%i) → retryable %s", (name, status, retryable) => {
    expect(classifySesError(sdkError(name, status))).toMatchObject({ retryable, status });
  });

  it("SES without an HTTP answer (network) is retryable", () => {
    expect(classifySesError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })).retryable).toBe(true);
  });

  it.each([
    [{ responseCode: 421, code: "EENVELOPE" }, true],
    [{ responseCode: 452, code: "EENVELOPE" }, true],
    [{ responseCode: 550, code: "EENVELOPE" }, false],
    [{ responseCode: 535, code: "EAUTH" }, false],
    [{ code: "ECONNECTION" }, true],
    [{ code: "ETIMEDOUT" }, true],
    [{ code: "EDNS" }, true],
    [{ code: "EMESSAGE" }, false],
  ])("SMTP %o → retryable %s", (props, retryable) => {
    expect(classifySmtpError(Object.assign(new Error("smtp"), props)).retryable).toBe(retryable);
  });
});
