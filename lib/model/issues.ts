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

/**
 * A schema path as the input is written: a field that takes "one or a list" (`slack: {…}` or
 * `slack: [{…}]`) is checked as a list, so its issues say `[0]` where the input has no list.
 */
export function inputPath(input: unknown, path: ReadonlyArray<PropertyKey>): PropertyKey[] {
  const out: PropertyKey[] = [];
  let v: unknown = input;
  for (const seg of path) {
    if (seg === 0 && v !== undefined && !Array.isArray(v)) continue;
    out.push(seg);
    v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[seg] : undefined;
  }
  return out;
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let v: unknown = input;
  for (const seg of inputPath(input, path)) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

/** The edit distance of two strings (insertions, deletions, substitutions), for "did you mean". */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The allowed word nearest to `word`, when it is at most `within` edits away (ties: the first). */
export function closestWord(word: string, allowed: Iterable<string>, within = 2): string | undefined {
  let best: { word: string; d: number } | undefined;
  for (const w of allowed) {
    const d = editDistance(word.toLowerCase(), w.toLowerCase());
    if (d <= within && (!best || d < best.d)) best = { word: w, d };
  }
  return best?.word;
}

/**
 * Orders paths as the input writes them: keys in the order they appear (JSON and YAML keep it), list
 * items by index; a path the input lacks (a required field) after its siblings.
 */
export function compareInputPaths(input: unknown, a: ReadonlyArray<PropertyKey>, b: ReadonlyArray<PropertyKey>): number {
  let v: unknown = input;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] === b[i]) {
      v = v !== null && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[a[i]!] : undefined;
      continue;
    }
    const rank = (seg: PropertyKey) => {
      if (typeof seg === "number") return seg;
      const at = v !== null && typeof v === "object" ? Object.keys(v).indexOf(String(seg)) : -1;
      return at < 0 ? Number.MAX_SAFE_INTEGER : at;
    };
    return rank(a[i]!) - rank(b[i]!);
  }
  return a.length - b.length;
}

type SchemaDef = { type: string; shape?: Record<string, unknown>; innerType?: unknown; in?: unknown; out?: unknown; options?: unknown[]; element?: unknown; valueType?: unknown };
const defOf = (schema: unknown): SchemaDef | undefined => (schema as { _zod?: { def?: SchemaDef } } | undefined)?._zod?.def;

/**
 * The keys an object schema allows at `path` (every branch of a union, through defaults, optionals
 * and pipes): what an unknown key there may have meant.
 */
export function allowedKeysAt(schema: unknown, path: ReadonlyArray<PropertyKey>): string[] {
  const keys = new Set<string>();
  const walk = (s: unknown, rest: ReadonlyArray<PropertyKey>, depth: number): void => {
    const def = defOf(s);
    if (!def || depth > 64) return;
    switch (def.type) {
      case "optional": case "default": case "nullable": case "prefault": case "nonoptional": case "readonly": case "catch":
        return walk(def.innerType, rest, depth + 1);
      case "pipe":
        walk(def.in, rest, depth + 1);
        return walk(def.out, rest, depth + 1);
      case "union":
        for (const o of def.options ?? []) walk(o, rest, depth + 1);
        return;
      case "array":
        // A number: that item; a name: the "one or a list" form written as one.
        return walk(def.element, typeof rest[0] === "number" ? rest.slice(1) : rest, depth + 1);
      case "record":
        if (rest.length) walk(def.valueType, rest.slice(1), depth + 1);
        return;
      case "object":
        if (!rest.length) for (const k of Object.keys(def.shape ?? {})) keys.add(k);
        else if (typeof rest[0] === "string" && def.shape?.[rest[0]]) walk(def.shape[rest[0]], rest.slice(1), depth + 1);
        return;
    }
  };
  walk(schema, path, 0);
  return [...keys];
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
