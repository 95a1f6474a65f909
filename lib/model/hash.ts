import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** A short, stable id from content: entries without ids (cluster logs) and alert ids are made this way. */
export function contentHash(...parts: Array<string | number | null | undefined>): string {
  return contentHashOf(parts);
}

/** contentHash of a list too long to spread into arguments (the ids of a list answer). */
export function contentHashOf(parts: Iterable<string | number | null | undefined>): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(`${p ?? ""}\u0000`);
  return h.digest("base64url").slice(0, 22);
}

/** HMAC-SHA256 of a text, in hex: the signatures Slack sends and Lookout's webhooks carry. */
export function hmacHex(secret: string, text: string): string {
  return createHmac("sha256", secret).update(text).digest("hex");
}

/** Two signatures compared in constant time (different lengths are simply different). */
export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
