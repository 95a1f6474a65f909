import { createHash } from "node:crypto";

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
