/** Email as the cloud sends it: SES v2 through nodemailer's SES transport (lib/notify/email/transport.ts). */
import { SESv2Client } from "@aws-sdk/client-sesv2";
import { sesTransport } from "../../notify/email/transport.js";
import type { EmailTransport } from "../../notify/types.js";

// Imported by name, also where ./fallback-senders.ts loads this module on demand: the bundler then leaves
// out the SMTP and file transports, which would bring every transport nodemailer has.
export const cloudSes = (): EmailTransport => sesTransport(new SESv2Client({}));
