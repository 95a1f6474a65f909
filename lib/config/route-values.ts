/**
 * How a route's values read: a uuid-shaped value is an id, anything else a name; in service names `*`
 * is a wildcard (any run of characters, also none). Also the little set algebra over wildcard patterns
 * that the EventBridge translation needs to decide, before deploying, what one pattern can express.
 */

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The 8-4-4-4-12 hex shape the platform's ids have (the same test as the config's other uuids). */
export const isUuidShaped = (v: string): boolean => UUID_SHAPE.test(v);

export const hasWildcard = (v: string): boolean => v.includes("*");

/** A route value split by what it matches. Ids are compared lower-cased (the platform issues them so). */
export interface RefValues {
  ids: string[];
  /** Names matched exactly. */
  names: string[];
  /** Name patterns with `*` (service only). */
  patterns: string[];
}

export function splitRefValues(values: readonly string[], wildcards: boolean): RefValues {
  const out: RefValues = { ids: [], names: [], patterns: [] };
  for (const v of values) {
    if (isUuidShaped(v)) out.ids.push(v.toLowerCase());
    else if (wildcards && hasWildcard(v)) out.patterns.push(v);
    else out.names.push(v);
  }
  return { ids: unique(out.ids), names: unique(out.names), patterns: unique(out.patterns) };
}

export const unique = <T>(xs: readonly T[]): T[] => [...new Set(xs)];

const globRegexCache = new Map<string, RegExp>();

/** Whether a name matches a `*` pattern; the whole name, case-sensitive, like EventBridge's wildcard. */
export function globMatch(pattern: string, value: string): boolean {
  let re = globRegexCache.get(pattern);
  if (!re) {
    const body = pattern
      .split("*")
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*");
    re = new RegExp(`^${body}$`);
    globRegexCache.set(pattern, re);
  }
  return re.test(value);
}

/** A pattern as EventBridge's `wildcard` writes it: `\` must be escaped; a route's `*` is always a wildcard. */
export const toEventBridgeWildcard = (pattern: string): string => pattern.replace(/\\/g, "\\\\");

/** An exact name as an EventBridge wildcard that matches only itself. */
export const literalAsEventBridgeWildcard = (name: string): string => name.replace(/[\\*]/g, "\\$&");

// ---- Languages of patterns and names, as small automata ------------------------------------------------

/** One set of strings: a `*` pattern, or one exact name (whose `*`, if any, is a plain character). */
export type Lang = { pattern: string } | { exact: string };

const STAR = -1;
type Tokens = number[];

const tokens = (l: Lang): Tokens =>
  "pattern" in l ? [...l.pattern].map((c) => (c === "*" ? STAR : c.codePointAt(0)!)) : [...l.exact].map((c) => c.codePointAt(0)!);

/** NFA states of one pattern: positions in its tokens; a STAR may also be skipped. */
function closure(t: Tokens, states: Iterable<number>): number[] {
  const out = new Set<number>();
  for (let k of states) {
    out.add(k);
    while (t[k] === STAR) out.add(++k);
  }
  return [...out].sort((a, b) => a - b);
}

function step(t: Tokens, states: number[], ch: number): number[] {
  const next: number[] = [];
  for (const k of states) {
    if (t[k] === STAR) next.push(k);
    else if (k < t.length && t[k] === ch) next.push(k + 1);
  }
  return closure(t, next);
}

/**
 * Walks the product of the automata of `a` and of the union `bs` over every string, and reports each
 * reachable pair (does a accept, does some b accept). Exact and small: patterns are a few characters.
 */
function explore(a: Lang, bs: readonly Lang[], visit: (aAccepts: boolean, bAccepts: boolean) => boolean): void {
  const ta = tokens(a);
  const tbs = bs.map(tokens);
  const letters = new Set<number>();
  for (const t of [ta, ...tbs]) for (const c of t) if (c !== STAR) letters.add(c);
  let other = 1;
  while (letters.has(other)) other++;
  const alphabet = [...letters, other];

  type State = { a: number[]; bs: number[][] };
  const key = (s: State) => JSON.stringify(s);
  const start: State = { a: closure(ta, [0]), bs: tbs.map((t) => closure(t, [0])) };
  const seen = new Set([key(start)]);
  const queue = [start];
  while (queue.length) {
    const s = queue.shift()!;
    const aAcc = s.a.includes(ta.length);
    const bAcc = s.bs.some((st, i) => st.includes(tbs[i]!.length));
    if (!visit(aAcc, bAcc)) return;
    if (!s.a.length) continue; // a accepts nothing from here on
    for (const ch of alphabet) {
      const n: State = { a: step(ta, s.a, ch), bs: s.bs.map((st, i) => step(tbs[i]!, st, ch)) };
      const k = key(n);
      if (!seen.has(k)) {
        seen.add(k);
        queue.push(n);
      }
    }
  }
}

/** Answers by question: simplification asks the same few questions many times. */
const answers = new Map<string, boolean>();
function memo(question: string, a: Lang, bs: readonly Lang[], compute: () => boolean): boolean {
  const key = JSON.stringify([question, a, bs]);
  let answer = answers.get(key);
  if (answer === undefined) {
    if (answers.size > 10_000) answers.clear();
    answers.set(key, (answer = compute()));
  }
  return answer;
}

/** Every string of `a` is in some `b`. */
export function covered(a: Lang, bs: readonly Lang[]): boolean {
  return memo("covered", a, bs, () => {
    let ok = true;
    explore(a, bs, (aAcc, bAcc) => (ok = !(aAcc && !bAcc)));
    return ok;
  });
}

/** No string of `a` is in any `b`. */
export function disjoint(a: Lang, bs: readonly Lang[]): boolean {
  return memo("disjoint", a, bs, () => {
    let ok = true;
    explore(a, bs, (aAcc, bAcc) => (ok = !(aAcc && bAcc)));
    return ok;
  });
}
