/**
 * Plain-English reasons for schema issues. zod/mini carries no messages of its own; the client, the
 * configuration loader and the simulator all say what was wrong with these words.
 */
import type * as z from "zod/mini";

/** `["results", 3, "id"]` → `$.results[3].id`. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === "number") return `${acc}[${seg}]`;
    const key = String(seg);
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `${acc}.${key}` : `${acc}[${JSON.stringify(key)}]`;
  }, "$");
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = input;
  for (const seg of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

/** Why a value failed its schema. Pass the parsed input to tell "is required" from "has the wrong type". */
export function describeIssue(issue: z.core.$ZodIssue, input?: unknown): string {
  switch (issue.code) {
    case "invalid_type": {
      if (arguments.length > 1 && valueAt(input, issue.path) === undefined) return "is required";
      const article = issue.expected === "object" || issue.expected === "array" || issue.expected === "int" ? "an" : "a";
      return `must be ${article} ${issue.expected}`;
    }
    case "too_big":
      if (issue.origin === "string") return `too long (max ${issue.maximum})`;
      if (issue.origin === "array") return `too many items (max ${issue.maximum})`;
      return `too large (max ${issue.maximum})`;
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) === 1 ? "must not be empty" : `too short (min ${issue.minimum})`;
      if (issue.origin === "array") return `too few items (min ${issue.minimum})`;
      return `too small (min ${issue.minimum})`;
    case "invalid_format":
      // z.guid() checks the 8-4-4-4-12 shape people call a uuid.
      return `is not a valid ${issue.format === "guid" ? "uuid" : issue.format}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "unrecognized_keys":
      return `unknown field(s) ${issue.keys.join(", ")}`;
    default:
      return issue.message && issue.message !== "Invalid input" ? issue.message : "is invalid";
  }
}
