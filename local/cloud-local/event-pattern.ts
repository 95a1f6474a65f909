/**
 * The filter patterns of an event source mapping's `FilterCriteria`, matched as Lambda matches them
 * (EventBridge's pattern syntax): a record goes to the function when any filter matches it.
 * Supported: nested objects; value lists of strings, numbers (matched numerically), booleans and null;
 * `prefix`, `suffix`, `anything-but` (a value, a list, or a `prefix`/`suffix`/`equals-ignore-case`/
 * `wildcard`), `exists`, `numeric`, `equals-ignore-case` and `wildcard`. A record's array matches when
 * any of its elements does. Anything else (`cidr`, `$or`, a malformed pattern) is refused, naming the
 * operator and its path in the pattern, rather than matched wrongly.
 */
// moto_server does not implement EventBridge's TestEventPattern: the part Lambda's filters need is written here.

/** A parsed pattern: does this record match? */
export type Matcher = (record: unknown) => boolean;

export interface Filter {
  Pattern: string;
}

/** What a value list tests: the leaf values found at its path (none when the field is absent). */
type Test = (values: readonly unknown[]) => boolean;
/** What most operators test: one leaf value. */
type ValueTest = (value: unknown) => boolean;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** EventBridge matches leaves only: an object is not a value, and an array holds one value an element. */
const leavesOf = (v: unknown): unknown[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).filter((x) => !isObject(x)));

const NUMERIC_OPS: Record<string, (a: number, b: number) => boolean> = {
  "=": (a, b) => a === b,
  "<": (a, b) => a < b,
  "<=": (a, b) => a <= b,
  ">": (a, b) => a > b,
  ">=": (a, b) => a >= b,
};

class PatternError extends Error {}

/** Parses one pattern (its JSON text, or the object) into a matcher; `where` names it in errors. */
export function parsePattern(pattern: string | Record<string, unknown>, where = "pattern"): Matcher {
  let parsed: unknown = pattern;
  if (typeof pattern === "string") {
    try {
      parsed = JSON.parse(pattern);
    } catch (err) {
      throw new Error(`${where}: not JSON (${(err as Error).message})`);
    }
  }
  try {
    if (!isObject(parsed)) throw new PatternError("a pattern is a JSON object");
    return objectMatcher(parsed, []);
  } catch (err) {
    if (err instanceof PatternError) throw new Error(`${where}: ${err.message}`);
    throw err;
  }
}

/** The filters of a mapping as one matcher: any filter matching is a match, and no filters match everything. */
export function compileFilters(filters: readonly Filter[] | undefined, where = "FilterCriteria"): Matcher {
  const matchers = (filters ?? []).map((f, i) => {
    const at = `${where}.Filters[${i}].Pattern`;
    if (typeof f?.Pattern !== "string") throw new Error(`${at}: missing (a filter is {"Pattern": "<JSON>"})`);
    return parsePattern(f.Pattern, at);
  });
  return matchers.length ? (record) => matchers.some((m) => m(record)) : () => true;
}

const compiled = new WeakMap<readonly Filter[], Matcher>();

/** Whether a record passes a mapping's filters; each filters list is parsed once. */
export function matchesFilters(filters: readonly Filter[], record: unknown): boolean {
  let m = compiled.get(filters);
  if (!m) compiled.set(filters, (m = compileFilters(filters)));
  return m(record);
}

function objectMatcher(pattern: Record<string, unknown>, path: string[]): Matcher {
  if (!Object.keys(pattern).length) throw new PatternError(`${pathText(path)}: an empty object (EventBridge refuses it)`);
  const fields = Object.entries(pattern).map(([key, sub]): [string, Matcher] => {
    const at = [...path, key];
    if (key.startsWith("$")) throw new PatternError(`${pathText(at)}: unknown operator "${key}"`);
    if (Array.isArray(sub)) {
      const test = listTest(sub, at);
      return [key, (v) => test(leavesOf(v))];
    }
    if (isObject(sub)) return [key, objectMatcher(sub, at)];
    throw new PatternError(`${pathText(at)}: a field's pattern is a list of values or an object, not ${JSON.stringify(sub)}`);
  });
  const match = (node: unknown): boolean => {
    if (Array.isArray(node)) return node.some(match);
    const obj = isObject(node) ? node : {};
    return fields.every(([key, m]) => m(obj[key]));
  };
  return match;
}

const pathText = (path: string[]) => path.join(".") || "(top)";

function listTest(list: unknown[], path: string[]): Test {
  if (!list.length) throw new PatternError(`${pathText(path)}: an empty list matches nothing`);
  const tests = list.map((item) => itemTest(item, path));
  return (values) => tests.some((t) => t(values));
}

const any = (t: ValueTest): Test => (values) => values.some(t);

function itemTest(item: unknown, path: string[]): Test {
  if (item === null || typeof item === "string" || typeof item === "number" || typeof item === "boolean") return any((v) => v === item);
  if (!isObject(item)) throw new PatternError(`${pathText(path)}: a list holds strings, numbers, booleans, null or operators, not ${JSON.stringify(item)}`);
  const [op, operand] = operatorOf(item, path);
  if (op === "exists") {
    if (typeof operand !== "boolean") throw operandError(op, "true or false", path);
    return (values) => (values.length > 0) === operand;
  }
  if (op === "anything-but") return anythingBut(operand, path);
  if (op === "numeric") return any(numericTest(operand, path));
  return any(stringTest(op, operand, path));
}

function operatorOf(item: Record<string, unknown>, path: string[]): [string, unknown] {
  const keys = Object.keys(item);
  if (keys.length !== 1) throw new PatternError(`${pathText(path)}: an operator is an object of one key, not ${JSON.stringify(item)}`);
  return [keys[0]!, item[keys[0]!]];
}

const operandError = (op: string, what: string, path: string[]) => new PatternError(`${pathText(path)}: "${op}" takes ${what}`);

/** The operators that test a string value against a string: prefix, suffix, equals-ignore-case, wildcard. */
function stringTest(op: string, operand: unknown, path: string[]): ValueTest {
  const str = (f: (v: string, s: string) => boolean): ValueTest => {
    if (typeof operand === "string") return (v) => typeof v === "string" && f(v, operand);
    // `{"prefix": {"equals-ignore-case": "x"}}`
    if ((op === "prefix" || op === "suffix") && isObject(operand)) {
      const [inner, s] = operatorOf(operand, path);
      if (inner !== "equals-ignore-case" || typeof s !== "string") throw operandError(op, `a string or {"equals-ignore-case": string}`, path);
      return (v) => typeof v === "string" && f(v.toLowerCase(), s.toLowerCase());
    }
    throw operandError(op, "a string", path);
  };
  switch (op) {
    case "prefix":
      return str((v, s) => v.startsWith(s));
    case "suffix":
      return str((v, s) => v.endsWith(s));
    case "equals-ignore-case":
      return str((v, s) => v.toLowerCase() === s.toLowerCase());
    case "wildcard":
      return wildcardTest(operand, path);
    default:
      throw new PatternError(`${pathText(path)}: unknown operator "${op}"`);
  }
}

/** `*` matches any run of characters, `\*` a star and `\\` a backslash; `**` is refused, as EventBridge refuses it. */
function wildcardTest(operand: unknown, path: string[]): ValueTest {
  const list = Array.isArray(operand) ? operand : [operand];
  if (!list.length || !list.every((p) => typeof p === "string")) throw operandError("wildcard", "a string", path);
  const res = list.map((p: string) => {
    const source = (p.match(/\\[\s\S]?|\*+|[^\\*]+/g) ?? []).map((t) => {
      if (t === "*") return "[\\s\\S]*";
      if (t.startsWith("*")) throw operandError("wildcard", `no consecutive * (${JSON.stringify(p)})`, path);
      if (t.startsWith("\\")) {
        if (t !== "\\*" && t !== "\\\\") throw operandError("wildcard", `\\ only before * or \\ (${JSON.stringify(p)})`, path);
        return t;
      }
      return t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    });
    return new RegExp(`^${source.join("")}$`);
  });
  return (v) => typeof v === "string" && res.some((r) => r.test(v));
}

function anythingBut(operand: unknown, path: string[]): Test {
  if (typeof operand === "string" || typeof operand === "number") return any((v) => v !== operand);
  if (Array.isArray(operand)) {
    const allOf = (type: string) => operand.every((v) => typeof v === type);
    if (!operand.length || (!allOf("string") && !allOf("number"))) throw operandError("anything-but", "a list of strings or a list of numbers", path);
    return any((v) => !operand.includes(v));
  }
  if (isObject(operand)) {
    const [op, inner] = operatorOf(operand, path);
    if (op === "equals-ignore-case" && Array.isArray(inner)) {
      if (!inner.every((s) => typeof s === "string")) throw operandError(op, "a string or a list of strings", path);
      const lower = new Set(inner.map((s: string) => s.toLowerCase()));
      return any((v) => typeof v === "string" && !lower.has(v.toLowerCase()));
    }
    if (!["prefix", "suffix", "equals-ignore-case", "wildcard"].includes(op)) throw new PatternError(`${pathText(path)}: unknown operator "${op}" in "anything-but"`);
    const t = stringTest(op, inner, path);
    return any((v) => typeof v === "string" && !t(v));
  }
  throw operandError("anything-but", "a string, a number, a list of them, or an operator", path);
}

/** `[op, n]` or a range `[">", a, "<", b]`; only a JSON number matches. */
function numericTest(operand: unknown, path: string[]): ValueTest {
  const bad = () => operandError("numeric", `[op, number] or [">"|">=", number, "<"|"<=", number], not ${JSON.stringify(operand)}`, path);
  if (!Array.isArray(operand) || (operand.length !== 2 && operand.length !== 4)) throw bad();
  const conds: Array<[(a: number, b: number) => boolean, number]> = [];
  for (let i = 0; i < operand.length; i += 2) {
    const op = operand[i];
    const n = operand[i + 1];
    if (typeof op !== "string" || !NUMERIC_OPS[op] || typeof n !== "number" || !Number.isFinite(n)) throw bad();
    conds.push([NUMERIC_OPS[op], n]);
  }
  if (operand.length === 4 && (!String(operand[0]).startsWith(">") || !String(operand[2]).startsWith("<"))) throw bad();
  return (v) => typeof v === "number" && conds.every(([f, n]) => f(v, n));
}
