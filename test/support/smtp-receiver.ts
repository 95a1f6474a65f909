/**
 * A local SMTP server for tests (the `smtp-server` package) on a free port of 127.0.0.1: records each
 * message's envelope and raw MIME, parsed with `mailparser`; can be told to answer the next N commands
 * with an SMTP error (e.g. 451 at RCPT, 554 at DATA) or to require a login.
 */
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

export interface SmtpFault {
  phase: "mail" | "rcpt" | "data";
  code: number;
  message?: string;
  times?: number;
}

export interface SmtpReceiver {
  port: number;
  url: string;
  /** smtp://user:pass@… when started with `auth`. */
  authUrl?: string;
  messages: ReceivedMail[];
  fail(fault: SmtpFault): void;
  /** Forgets the faults not yet answered. */
  clearFaults(): void;
  close(): Promise<void>;
}

export async function startSmtpReceiver(opts: { auth?: { user: string; pass: string } } = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const faults: SmtpFault[] = [];
  const fault = (phase: SmtpFault["phase"]): Error | undefined => {
    const i = faults.findIndex((f) => f.phase === phase);
    if (i === -1) return undefined;
    const f = faults[i]!;
    f.times = (f.times ?? 1) - 1;
    if (f.times <= 0) faults.splice(i, 1);
    return Object.assign(new Error(f.message ?? `test fault at ${phase}`), { responseCode: f.code });
  };

  const server = new SMTPServer({
    secure: false,
    disabledCommands: opts.auth ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !opts.auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return cb(null, { user: auth.username });
      return cb(Object.assign(new Error("Invalid username or password"), { responseCode: 535 }));
    },
    onMailFrom(_address, _session, cb) {
      cb(fault("mail") ?? null);
    },
    onRcptTo(_address, _session, cb) {
      cb(fault("rcpt") ?? null);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const err = fault("data");
        if (err) return cb(err);
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw)
          .then((parsed) => {
            const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined;
            messages.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw, parsed });
            cb(null);
          })
          .catch((e: Error) => cb(e));
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  const receiver: SmtpReceiver = {
    port,
    url: `smtp://127.0.0.1:${port}`,
    messages,
    fail: (f) => faults.push({ times: 1, ...f }),
    clearFaults: () => void (faults.length = 0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  if (opts.auth) receiver.authUrl = `smtp://${encodeURIComponent(opts.auth.user)}:${encodeURIComponent(opts.auth.pass)}@127.0.0.1:${port}`;
  return receiver;
}
