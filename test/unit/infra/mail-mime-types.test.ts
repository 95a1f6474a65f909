/**
 * The packaged bundles' stand-in for nodemailer's file-type table (infra/mail-mime-types.mjs): the same
 * answers as nodemailer's own for the parts Lookout's messages are made of, and its defaults otherwise.
 */
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain ESM of the packaging, no type declarations
import * as standIn from "../../../infra/mail-mime-types.mjs";
import * as nodemailers from "../../../node_modules/nodemailer/dist/esm/mime-funcs/mime-types.js";

describe("the packaged file-type table", () => {
  it("answers as nodemailer's for a message's own parts", () => {
    for (const file of ["message.txt", "message.html", "index.htm", "invite.ics", "alert.json", "TXT", "page.html?x=1", "", undefined]) {
      expect(standIn.detectMimeType(file), String(file)).toBe(nodemailers.detectMimeType(file));
    }
    for (const type of ["text/plain", "text/html", "TEXT/HTML ", "text/calendar", "application/json", "text/x-unknown", "", undefined]) {
      expect(standIn.detectExtension(type), String(type)).toBe(nodemailers.detectExtension(type));
    }
  });

  it("falls back to nodemailer's defaults for what Lookout never sends", () => {
    expect(standIn.detectMimeType("report.pdf")).toBe("application/octet-stream");
    expect(standIn.detectExtension("image/png")).toBe("bin");
    expect(standIn.detectExtension("text/csv")).toBe("txt");
  });
});
