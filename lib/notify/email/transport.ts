/**
 * EmailTransport adapters, all built on nodemailer (MIME composition, encoding of non-ASCII headers,
 * multipart/alternative with the text and HTML parts):
 *  - `sesTransport(client)`: SES v2 SendEmail with the raw MIME message nodemailer's composer builds, so
 *    our In-Reply-To / References headers are sent as is (SES gives the message its own Message-ID).
 *  - `smtpTransport(url)`: nodemailer's SMTP transport, when `email.smtp_url` is configured.
 *  - `fileTransport(dir)`: one RFC 5322 `.eml` file per message (nodemailer's stream transport, CRLF),
 *    named `<iso time>-<alert id>.eml`, for one machine without a mail server.
 * Failures become EmailDeliveryError with `retryable`: SES throttling, 5xx and network failures, SMTP
 * 4xx replies and connection failures are retryable; SES MessageRejected, MailFromDomainNotVerified,
 * other 4xx and SMTP 5xx replies are not. SES sends are retried here (`sesTransport`), once at most
 * after one that may have reached SES unanswered.
 */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SendEmailCommand, type SESv2Client } from "@aws-sdk/client-sesv2";
import nodemailer from "nodemailer";
// The SES path composes with nodemailer's composer alone: its mailer and SES transport would bring DKIM,
// proxies and plugins into the Lambda bundle, `createTransport` every transport (SMTP, sendmail, …).
import MailComposer from "nodemailer/lib/mail-composer";
import { oneLine } from "../view/format.js";
import { EmailDeliveryError, type EmailMessage, type EmailSent, type EmailTransport } from "../types.js";
import { AttemptFailed, mayHaveArrivedAfter, networkCode, type RetrySettings, retryLoop, withRetries } from "../receiver-retry.js";
import { ALERT_ID_HEADER } from "./render.js";

type MailOptions = Parameters<ReturnType<typeof nodemailer.createTransport>["sendMail"]>[0];

/** EmailMessage → nodemailer's message options; the threading headers go to their own options. */
export function mailOptions(message: EmailMessage): MailOptions {
  const headers: Record<string, string> = {};
  const opts: MailOptions = { from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html };
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    const key = name.toLowerCase();
    if (key === "message-id") opts.messageId = value;
    else if (key === "in-reply-to") opts.inReplyTo = value;
    else if (key === "references") opts.references = value;
    else headers[name] = oneLine(value);
  }
  if (Object.keys(headers).length) opts.headers = headers;
  return opts;
}

const clipMessage = (s: string) => oneLine(s).slice(0, 300);

// --- SES v2 ------------------------------------------------------------------------------------------

/** SES v2 error names that will not succeed on a retry. */
const SES_PERMANENT = new Set([
  "MessageRejected",
  "MailFromDomainNotVerifiedException",
  "AccountSuspendedException",
  "SendingPausedException",
  "BadRequestException",
  "NotFoundException",
  "ValidationException",
]);
const SES_THROTTLED = new Set(["TooManyRequestsException", "Throttling", "ThrottlingException", "LimitExceededException"]);

export function classifySesError(err: unknown): EmailDeliveryError {
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number }; $retryable?: unknown; code?: string };
  const name = e?.name ?? "Error";
  const status = e?.$metadata?.httpStatusCode;
  let retryable: boolean;
  if (SES_PERMANENT.has(name)) retryable = false;
  else if (SES_THROTTLED.has(name) || e?.$retryable) retryable = true;
  else if (status !== undefined) retryable = status === 429 || status >= 500;
  else retryable = true; // no HTTP answer at all: a network failure
  return new EmailDeliveryError(`SES SendEmail failed: ${name}: ${clipMessage(e?.message ?? "")}`, retryable, status);
}

export interface SesTransportOptions extends RetrySettings {
  /** SES configuration set (event publishing, dedicated IPs). */
  configurationSetName?: string;
}

/**
 * A failed SendEmail for the retry loop: throttling and what SES refused retried, what may have reached
 * SES unanswered (a 5xx, no answer in time, the connection lost after the request) sent again once at
 * most — SendEmail is not idempotent.
 */
function sesAttemptFailure(err: unknown): AttemptFailed {
  const e = classifySesError(err);
  const status = e.status;
  // An answer under 500 (throttling included) says SES did not take it; no answer depends on when it broke.
  const mayHaveArrived = e.retryable && (status !== undefined ? status >= 500 : mayHaveArrivedAfter(networkCode(err)));
  return new AttemptFailed({ retryable: e.retryable, ...(mayHaveArrived ? { mayHaveArrived } : {}), ...(status !== undefined ? { status } : {}), reason: e.message });
}

/** The Message-ID SES gives a message it accepted, as nodemailer's SES transport writes it. */
export function sesMessageId(id: string, region: string): string {
  return id.includes("@") ? `<${id}>` : `<${id}@${region === "us-east-1" ? "email" : region}.amazonses.com>`;
}

/**
 * `client` must not retry by itself (`maxAttempts: 1`, lib/app/cloud/clients/sesv2.ts): the send is
 * retried here, with the receivers' policy (lib/notify/receiver-retry.ts), so that a message SES may
 * have taken is not sent three times.
 */
export function sesTransport(client: SESv2Client, opts: SesTransportOptions = {}): EmailTransport {
  const loop = retryLoop(opts);
  return {
    async send(message: EmailMessage): Promise<EmailSent> {
      let raw: Buffer;
      let envelope: { from: string | false; to: string[] };
      try {
        // Every line end CRLF, as SES requires of a raw message (the composer would keep a text part's own LFs).
        const mime = new MailComposer({ ...mailOptions(message), newline: "windows" }).compile();
        envelope = mime.getEnvelope();
        raw = await mime.build();
      } catch (err) {
        throw new EmailDeliveryError(`could not compose the message: ${clipMessage((err as Error).message ?? String(err))}`, false);
      }
      // Before the send: once SES has the message, nothing may fail the delivery (it would be sent again).
      const region = await client.config.region();
      const command = new SendEmailCommand({
        Content: { Raw: { Data: raw } },
        ...(envelope.from ? { FromEmailAddress: envelope.from } : {}),
        Destination: { ToAddresses: envelope.to },
        ...(opts.configurationSetName ? { ConfigurationSetName: opts.configurationSetName } : {}),
      });
      const { MessageId } = await withRetries(
        {
          ...loop, unsure: "once",
          giveUp: (f, why) => new EmailDeliveryError(`${f.reason}${why}`, f.retryable, f.status),
        },
        () => client.send(command).catch((err: unknown) => Promise.reject(sesAttemptFailure(err))),
      );
      return { messageId: sesMessageId(String(MessageId), region) };
    },
  };
}

// --- SMTP --------------------------------------------------------------------------------------------

/** Connection-level failures of nodemailer's SMTP client and of the socket beneath it. */
const SMTP_TRANSIENT_CODES = new Set([
  "ECONNECTION",
  "ETIMEDOUT",
  "ESOCKET",
  "EDNS",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "EPROTOCOL",
]);

export function classifySmtpError(err: unknown, secret?: string): EmailDeliveryError {
  const e = err as { message?: string; code?: string; responseCode?: number };
  let msg = clipMessage(e?.message ?? String(err));
  if (secret) msg = msg.split(secret).join("[REDACTED]");
  const code = e?.responseCode;
  let retryable: boolean;
  if (typeof code === "number" && code >= 400 && code < 500) retryable = true;
  else if (typeof code === "number" && code >= 500) retryable = false;
  else retryable = SMTP_TRANSIENT_CODES.has(e?.code ?? "");
  return new EmailDeliveryError(`SMTP send failed${e?.code ? ` (${e.code})` : ""}: ${msg}`, retryable, code);
}

export interface SmtpTransportOptions {
  /** Per connection / greeting / socket, ms (default 15 s). */
  timeoutMs?: number;
}

/** nodemailer's SMTP transport from a URL (`smtp://user:pass@host:587`, `smtps://…`). */
export function smtpTransport(url: string, opts: SmtpTransportOptions = {}): EmailTransport & { close(): void } {
  const timeout = opts.timeoutMs ?? 15_000;
  let password: string | undefined;
  try {
    password = decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    throw new EmailDeliveryError("SMTP URL is not a valid URL", false);
  }
  // The URL's settings win over these (nodemailer merges URL data last); it rarely sets timeouts.
  const transporter = nodemailer.createTransport({ url, connectionTimeout: timeout, greetingTimeout: timeout, socketTimeout: timeout });
  return {
    async send(message: EmailMessage): Promise<EmailSent> {
      try {
        const info = await transporter.sendMail(mailOptions(message));
        return { messageId: String(info.messageId) };
      } catch (err) {
        throw classifySmtpError(err, password);
      }
    },
    close: () => transporter.close(),
  };
}

// --- .eml files --------------------------------------------------------------------------------------

export interface FileTransportOptions {
  now?: () => Date;
}

const FILE_TRANSIENT = new Set(["ENOSPC", "EAGAIN", "EMFILE", "ENFILE", "EBUSY"]);

/** A file-name-safe alert id: the header's value, else the Message-ID's local part. */
function alertIdOf(message: EmailMessage): string {
  const h = message.headers ?? {};
  const fromHeader = Object.entries(h).find(([k]) => k.toLowerCase() === ALERT_ID_HEADER.toLowerCase())?.[1];
  const fromMessageId = Object.entries(h).find(([k]) => k.toLowerCase() === "message-id")?.[1]?.replace(/^<|@.*$/g, "");
  const id = (fromHeader ?? fromMessageId ?? "message").replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 100);
  return id.replace(/^\.+/, "") || "message";
}

/** Writes each message as `<dir>/<iso time>-<alert id>.eml` (colons in the time become dashes). */
export function fileTransport(dir: string, opts: FileTransportOptions = {}): EmailTransport & { lastPath?: string } {
  const now = opts.now ?? (() => new Date());
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" });
  let seq = 0;
  const self: EmailTransport & { lastPath?: string } = {
    async send(message: EmailMessage): Promise<EmailSent> {
      let info;
      try {
        info = await transporter.sendMail({ ...mailOptions(message), date: now() });
      } catch (err) {
        throw new EmailDeliveryError(`could not compose the message: ${clipMessage((err as Error).message ?? String(err))}`, false);
      }
      const name = `${now().toISOString().replace(/:/g, "-")}-${alertIdOf(message)}.eml`;
      const path = join(dir, name);
      const tmp = join(dir, `.${name}.${process.pid}.${++seq}.tmp`);
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(tmp, info.message as Buffer);
        await rename(tmp, path); // whole files only: a reader never sees half a message
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? "";
        throw new EmailDeliveryError(`could not write ${name}: ${code || "error"}`, FILE_TRANSIENT.has(code));
      }
      self.lastPath = path;
      return { messageId: String(info.messageId) };
    },
  };
  return self;
}
