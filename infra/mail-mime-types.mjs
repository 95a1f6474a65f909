// Stands in, in the packaged bundles, for nodemailer's `mime-funcs/mime-types.js` (infra/esbuild-plugins.cjs):
// a table of every file type (74 KB minified, an eighth of the email function's cold start) that nodemailer
// consults only to name attachments and embedded images. Lookout's messages have neither: a text and an
// HTML part with their types given. Same exports and defaults; the types Lookout's parts could be named by.
import path from "node:path";

const DEFAULT_TYPE = "application/octet-stream";
const DEFAULT_EXTENSION = "bin";
const TYPES = new Map([
  ["text/plain", "txt"],
  ["text/html", "html"],
  ["text/calendar", "ics"],
  ["application/json", "json"],
]);
const EXTENSIONS = new Map([
  ["txt", "text/plain"],
  ["text", "text/plain"],
  ["htm", "text/html"],
  ["html", "text/html"],
  ["ics", "text/calendar"],
  ["json", "application/json"],
]);

export function detectMimeType(filename) {
  if (!filename) return DEFAULT_TYPE;
  const parsed = path.parse(filename);
  const extension = (parsed.ext.slice(1) || parsed.name || "").split("?").shift().trim().toLowerCase();
  return EXTENSIONS.get(extension) ?? DEFAULT_TYPE;
}

export function detectExtension(mimeType) {
  if (!mimeType) return DEFAULT_EXTENSION;
  const parts = mimeType.toLowerCase().trim().split("/");
  const rootType = parts.shift().trim();
  const subType = parts.join("/").trim();
  return TYPES.get(`${rootType}/${subType}`) ?? (rootType === "text" ? "txt" : DEFAULT_EXTENSION);
}
