/** Email as the cloud sends it: SES v2 SendEmail with the MIME message nodemailer composes (lib/notify/email/transport.ts). */
import { sesv2 } from "./clients/sesv2.js";
import { sesTransport } from "../../notify/email/transport.js";
import type { EmailTransport } from "../../notify/types.js";

// Imported by name, also where ./fallback-senders.ts loads this module on demand: the bundler then leaves
// out the SMTP and file transports, which would bring every transport nodemailer has.
export const cloudSes = (): EmailTransport => sesTransport(sesv2);
