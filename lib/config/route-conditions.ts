/**
 * Route matches as boolean algebra, for the EventBridge translation. A condition is a disjunction of
 * terms (DNF); a term is a conjunction of one atom per field path; an atom says what one field must be:
 * one of some values/patterns, none of them (but present), or absent. EventBridge can say exactly one
 * such atom per field per `$or` branch, so everything is multiplied out and simplified here, and what
 * one pattern cannot say is refused before anything is deployed.
 */
import { type Lang, covered, disjoint, globMatch, splitRefValues, unique } from "./route-values.js";
import { type EventKind, KINDS, type Transition, detailTypeOf } from "../model/event.js";
import { REF_FIELDS, type RouteMatch, withFollowing } from "./route-types.js";

/** `values` match exactly; `patterns` are `*` wildcards (service names only). Lists kept sorted. */
export type Atom =
  | { op: "in"; values: string[]; patterns: string[] }
  | { op: "not"; values: string[]; patterns: string[] }
  | { op: "absent" };

/** Field path below `detail` (`environment.name`) → its atom. */
export type Term = Readonly<Record<string, Atom>>;
/** Any of the terms. `[]` is false; `[{}]` is true. */
export type Dnf = Term[];

/** A conjunction EventBridge cannot express in one pattern (a wildcard minus part of itself). */
export class InexpressibleError extends Error {
  constructor(
    readonly path: string,
    readonly pattern: string,
    readonly excluded: string[],
  ) {
    super(`cannot match ${path} "${pattern}" while excluding ${excluded.map((e) => `"${e}"`).join(", ")}`);
    this.name = "InexpressibleError";
  }
}

const sorted = (xs: readonly string[]) => unique(xs).sort();
export const inAtom = (values: readonly string[], patterns: readonly string[] = []): Atom => ({ op: "in", values: sorted(values), patterns: sorted(patterns) });
const notAtom = (values: readonly string[], patterns: readonly string[]): Atom => ({ op: "not", values: sorted(values), patterns: sorted(patterns) });
const ABSENT: Atom = { op: "absent" };

const langs = (a: { values: string[]; patterns: string[] }): Lang[] => [
  ...a.values.map((exact) => ({ exact })),
  ...a.patterns.map((pattern) => ({ pattern })),
];
const hits = (a: { values: string[]; patterns: string[] }, v: string) => a.values.includes(v) || a.patterns.some((p) => globMatch(p, v));

/** a ∧ b on one field; null when no value satisfies both. */
export function conjoinAtoms(path: string, a: Atom, b: Atom): Atom | null {
  if (a.op === "absent" || b.op === "absent") return a.op === b.op ? ABSENT : null;
  if (a.op === "not" && b.op === "not") return notAtom([...a.values, ...b.values], [...a.patterns, ...b.patterns]);
  if (a.op === "in" && b.op === "in") {
    // Never built (a route constrains each field once); kept total for exact values.
    if (a.patterns.length || b.patterns.length) throw new Error(`internal: two wildcard constraints on ${path}`);
    const values = a.values.filter((v) => b.values.includes(v));
    return values.length ? inAtom(values) : null;
  }
  const [inc, exc] = a.op === "in" ? [a, b as Extract<Atom, { op: "not" }>] : [b as Extract<Atom, { op: "in" }>, a];
  const values = inc.values.filter((v) => !hits(exc, v));
  const excluded = langs(exc);
  const patterns: string[] = [];
  for (const p of inc.patterns) {
    if (covered({ pattern: p }, excluded)) continue; // all of it excluded
    if (!disjoint({ pattern: p }, excluded)) throw new InexpressibleError(path, p, [...exc.values, ...exc.patterns]);
    patterns.push(p); // none of it excluded
  }
  return values.length || patterns.length ? inAtom(values, patterns) : null;
}

/** Every value a allows, b allows too (false when unsure: only costs a simplification). */
export function atomImplies(a: Atom, b: Atom): boolean {
  if (a.op === "absent" || b.op === "absent") return a.op === b.op;
  if (a.op === "in" && b.op === "in") {
    return a.values.every((v) => hits(b, v)) && a.patterns.every((p) => covered({ pattern: p }, langs(b)));
  }
  if (a.op === "in" && b.op === "not") {
    return a.values.every((v) => !hits(b, v)) && a.patterns.every((p) => disjoint({ pattern: p }, langs(b)));
  }
  if (a.op === "not" && b.op === "not") {
    // Excluding more implies excluding less.
    return b.values.every((v) => hits(a, v)) && b.patterns.every((p) => covered({ pattern: p }, langs(a)));
  }
  return false;
}

const atomKeys = new WeakMap<Atom, string>();
const atomKey = (a: Atom) => {
  let k = atomKeys.get(a);
  if (k === undefined) atomKeys.set(a, (k = JSON.stringify(a)));
  return k;
};

export function conjoinTerms(a: Term, b: Term): Term | null {
  const out: Record<string, Atom> = { ...a };
  for (const [path, atom] of Object.entries(b)) {
    const prior = out[path];
    const merged = prior ? conjoinAtoms(path, prior, atom) : atom;
    if (!merged) return null;
    out[path] = merged;
  }
  return out;
}

/** a ⇒ b: b constrains nothing a does not constrain at least as tightly. */
export function termImplies(a: Term, b: Term): boolean {
  return Object.entries(b).every(([path, atom]) => {
    const mine = a[path];
    return mine !== undefined && (atomKey(mine) === atomKey(atom) || atomImplies(mine, atom));
  });
}

/** Drops terms another term already covers (and duplicates): keeps patterns small. */
export function simplify(dnf: Dnf): Dnf {
  const kept: Term[] = [];
  dnf.forEach((t, i) => {
    const coveredByOther = dnf.some((o, j) => j !== i && termImplies(t, o) && (!termImplies(o, t) || j < i));
    if (!coveredByOther) kept.push(t);
  });
  return kept;
}

/**
 * More alternatives than any pattern within EventBridge's quota can hold (the smallest branch,
 * `{"kind":[{"exists":false}]}`, is 28 characters; 4096 is the most the quota can be raised to).
 */
export const MAX_TERMS = 150;
/** Products beyond this are not simplified (quadratic) but refused. */
const MAX_PRODUCT = 5_000;

export class TooLargeError extends Error {
  constructor(readonly terms: number) {
    super(`${terms} alternatives`);
    this.name = "TooLargeError";
  }
}

export function and(a: Dnf, b: Dnf): Dnf {
  if (a.length * b.length > MAX_PRODUCT) throw new TooLargeError(a.length * b.length);
  const out: Term[] = [];
  for (const x of a) for (const y of b) {
    const t = conjoinTerms(x, y);
    if (t) out.push(t);
  }
  const simple = simplify(out);
  if (simple.length > MAX_TERMS) throw new TooLargeError(simple.length);
  return simple;
}

/** The match of a route as clauses (all must hold), each a DNF (any of its terms). */
export function matchClauses(match: RouteMatch): Dnf[] {
  const clauses: Dnf[] = [];
  for (const field of ["kind", "transition", "severity"] as const) {
    const values = match[field];
    if (values?.length) clauses.push([{ [field]: inAtom(field === "transition" ? withFollowing(values) : values) }]);
  }
  for (const field of REF_FIELDS) {
    const values = match[field];
    if (!values?.length) continue;
    const { ids, names, patterns } = splitRefValues(values, field === "service");
    const terms: Term[] = [];
    if (ids.length) terms.push({ [`${field}.id`]: inAtom(ids) });
    if (names.length || patterns.length) terms.push({ [`${field}.name`]: inAtom(names, patterns) });
    clauses.push(terms);
  }
  return clauses;
}

/**
 * What the bus guarantees about every event on it: both local bus and EventBridge publisher derive the
 * detail-type from kind and transition (lib/model/event.ts detailTypeOf) and refuse an event without them
 * or with a pair that does not exist. So neither is ever absent, and a transition fixes the kind.
 */
const ALWAYS_PRESENT = new Set(["kind", "transition"]);
const kindsOf = (t: string): EventKind[] =>
  KINDS.filter((k) => {
    try {
      detailTypeOf(k, t as Transition);
      return true;
    } catch {
      return false;
    }
  });

/** The match without `kind` when every listed transition is of a listed kind (so it says nothing more). */
function withoutImpliedKind(match: RouteMatch): RouteMatch {
  const { kind, transition } = match;
  if (!kind?.length || !transition?.length) return match;
  if (!transition.every((t) => kindsOf(t).every((k) => kind.includes(k)))) return match;
  const { kind: _implied, ...rest } = match;
  return rest;
}

/**
 * NOT(match): some clause fails. A clause fails when each of its terms fails, and a term `f ∈ S` fails
 * when f holds something else — or is absent (EventBridge's anything-but never matches a missing
 * field), except for what the bus guarantees is present. Every negated field is more branches in the
 * patterns of later routes, so an implied `kind` is left out — unless the later route (`against`)
 * constrains kind itself, where it prunes branches instead.
 */
export function negateMatch(match: RouteMatch, against: RouteMatch = {}): Dnf {
  const out: Term[] = [];
  for (const clause of matchClauses(against.kind?.length ? match : withoutImpliedKind(match))) {
    let failing: Dnf = [{}];
    for (const term of clause) {
      const [path, atom] = Object.entries(term)[0]!;
      if (atom.op !== "in") throw new Error("internal: a match clause holds only `in` atoms");
      const other: Term = { [path]: notAtom(atom.values, atom.patterns) };
      failing = and(failing, ALWAYS_PRESENT.has(path) ? [other] : [other, { [path]: ABSENT }]);
    }
    out.push(...failing);
  }
  return simplify(out);
}
