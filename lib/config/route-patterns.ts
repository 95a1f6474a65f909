/**
 * Routes as EventBridge event patterns: the pattern of a route selects exactly the events `routeEvent`
 * gives that route (test/integration/routes/rules.moto.test.ts checks it against moto_server,
 * test/unit/routes/match.parity.test.ts fuzzes it). `continue: false` becomes, in every later route's pattern,
 * the negation of the stopping route's match: `$or` branches of `anything-but` and `{"exists": false}`.
 *
 * Grammar kept to what EventBridge documents for event buses: exact lists, `wildcard`, `anything-but`
 * (a list, or `{"wildcard": …}`), `exists`, and `$or` with two or more branches. A field path appears once
 * per branch: EventBridge's compiler lets a `$or` branch silently replace an outer constraint on the same
 * path, so constraints on one field are merged here (route-conditions.ts). Independent conditions (on
 * disjoint fields) each get their own `$or`, at the top, in `detail` or in `detail.<ref>`, which
 * EventBridge ANDs: multiplying them out instead would overflow the 2048-character quota after two
 * stopping routes.
 */
import { DETAIL_TYPES, EVENT_SOURCE, KINDS, type Transition, detailTypeOf } from "../model/event.js";
import { type Atom, type Dnf, InexpressibleError, MAX_TERMS, type Term, TooLargeError, and, matchClauses, negateMatch } from "./route-conditions.js";
import { type Route, routeReceivers, withFollowing } from "./route-types.js";
import { literalAsEventBridgeWildcard, toEventBridgeWildcard } from "./route-values.js";

/** EventBridge's default quota for an event pattern, in characters (can be raised to 4096). */
export const EVENT_PATTERN_MAX_CHARS = 2048;

export type EventPattern = Record<string, unknown>;

/** A route that no pattern can serve as written; `field` is the config path below the route. */
export class RoutePatternError extends Error {
  constructor(
    readonly route: string,
    readonly reason: "unreachable" | "inexpressible" | "too_large",
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "RoutePatternError";
  }
}

/** The detail-types a route's kinds and transitions allow; undefined when transitions leave it open. */
function detailTypes(route: Route): string[] | undefined {
  const transitions = route.match.transition;
  if (!transitions?.length) return undefined; // kind alone: new transitions of a kind stay matched
  const out = new Set<string>();
  for (const t of withFollowing(transitions)) {
    for (const k of route.match.kind ?? KINDS) {
      try {
        out.add(detailTypeOf(k, t as Transition));
      } catch {
        // not a pair that exists
      }
    }
  }
  return [...out];
}

/** A condition over some fields, ANDed with the other groups (whose fields are all different). */
interface Group {
  paths: Set<string>;
  dnf: Dnf;
}

const pathsOf = (dnf: Dnf) => new Set(dnf.flatMap((t) => Object.keys(t)));
const shares = (a: Set<string>, b: Set<string>) => [...a].some((p) => b.has(p));

/** Adds a condition: groups sharing a field with it are multiplied with it (which also prunes). */
function addGroup(groups: Group[], dnf: Dnf): Group[] {
  const paths = pathsOf(dnf);
  let merged: Group = { paths, dnf };
  const rest: Group[] = [];
  for (const g of groups) {
    if (shares(g.paths, merged.paths)) merged = { paths: new Set([...g.paths, ...merged.paths]), dnf: and(g.dnf, merged.dnf) };
    else rest.push(g);
  }
  return [...rest, merged];
}

/** The conditions of route `index`: its own match, then NOT(match) of each earlier stopping route. */
function routeGroups(routes: readonly Route[], index: number): Group[] {
  const route = routes[index]!;
  let groups: Group[] = [];
  for (const clause of matchClauses(route.match)) groups = addGroup(groups, clause);
  for (const earlier of routes.slice(0, index)) {
    if (earlier.continue) continue;
    try {
      groups = addGroup(groups, negateMatch(earlier.match, route.match));
    } catch (err) {
      if (!(err instanceof InexpressibleError)) throw err;
      throw new RoutePatternError(
        route.name,
        "inexpressible",
        `match.${err.path.split(".")[0]}`,
        `EventBridge ${err.message} (matched by route ${earlier.name}, which has continue: false) in one pattern; ` +
          `narrow the wildcard or drop continue: false`,
      );
    }
    if (groups.some((g) => !g.dnf.length)) {
      throw new RoutePatternError(route.name, "unreachable", "", `never matches: route ${earlier.name} (continue: false) takes every event it would match`);
    }
  }
  return groups;
}

/** Atoms every term of a group shares, and what is left of each term. */
function factor(dnf: Dnf): { common: Record<string, Atom>; residues: Term[] } {
  const [first, ...rest] = dnf;
  const common: Record<string, Atom> = {};
  for (const [path, atom] of Object.entries(first ?? {})) {
    const k = JSON.stringify(atom);
    if (rest.every((t) => t[path] !== undefined && JSON.stringify(t[path]) === k)) common[path] = atom;
  }
  let residues = dnf.map((t) => Object.fromEntries(Object.entries(t).filter(([p]) => !(p in common))) as Term);
  // An empty residue is the common part alone, which covers every other term.
  if (residues.some((r) => !Object.keys(r).length)) residues = [];
  return { common, residues: residues.length > 1 ? residues : [] };
}

/** Where a `$or` can go: "" (top), "detail", or "detail.<ref>" when all its fields are under one ref. */
function slotsFor(residues: Term[]): string[] {
  const heads = new Set(residues.flatMap((t) => Object.keys(t).map((p) => (p.includes(".") ? p.split(".")[0]! : ""))));
  const [only] = heads;
  return heads.size === 1 && only ? [`detail.${only}`, "detail", ""] : ["detail", ""];
}

interface Placed {
  common: Record<string, Atom>;
  /** Slot → the `$or` branches placed there. */
  ors: Map<string, Term[]>;
}

/** One `$or` per slot: the most constrained groups choose first; when none is free, two groups merge. */
function place(groups: Group[]): Placed {
  for (;;) {
    const common: Record<string, Atom> = {};
    const pending: { group: Group; residues: Term[]; slots: string[] }[] = [];
    for (const group of groups) {
      const f = factor(group.dnf);
      Object.assign(common, f.common);
      if (f.residues.length) pending.push({ group, residues: f.residues, slots: slotsFor(f.residues) });
    }
    pending.sort((a, b) => a.slots.length - b.slots.length);
    const ors = new Map<string, Term[]>();
    const stuck = pending.find((p) => {
      const slot = p.slots.find((s) => !ors.has(s));
      if (slot === undefined) return true;
      ors.set(slot, p.residues);
      return false;
    });
    if (!stuck) return { common, ors };
    // Merge the stuck group with the one whose product stays smallest, and lay out again.
    const others = pending.filter((p) => p !== stuck);
    const partner = others.reduce((best, p) => (p.group.dnf.length < best.group.dnf.length ? p : best));
    const merged: Group = { paths: new Set([...stuck.group.paths, ...partner.group.paths]), dnf: and(stuck.group.dnf, partner.group.dnf) };
    groups = [...groups.filter((g) => g !== stuck.group && g !== partner.group), merged];
  }
}

/** The event pattern of route `index`, honouring every earlier route with `continue: false`. */
export function eventPattern(routes: readonly Route[], index: number): EventPattern {
  const route = routes[index];
  if (!route) throw new RangeError(`no route ${index}`);
  const types = detailTypes(route);
  if (types && !types.length) {
    throw new RoutePatternError(
      route.name,
      "unreachable",
      "match.transition",
      `no event has kind ${(route.match.kind ?? []).join("/")} with transition ${(route.match.transition ?? []).join("/")}`,
    );
  }
  let placed: Placed;
  try {
    placed = place(routeGroups(routes, index));
  } catch (err) {
    if (!(err instanceof TooLargeError)) throw err;
    throw new RoutePatternError(
      route.name,
      "too_large",
      "",
      `its EventBridge pattern would need over ${MAX_TERMS} alternatives, far over the quota of ${EVENT_PATTERN_MAX_CHARS} characters; ` +
        `fewer values, or fewer routes with continue: false before it`,
    );
  }
  const { common, ors } = placed;

  const pattern: EventPattern = { source: [EVENT_SOURCE] };
  if (types && types.length < Object.keys(DETAIL_TYPES).length) pattern["detail-type"] = types;
  const detail = nest(common);
  for (const [slot, branches] of ors) {
    if (slot === "") continue;
    const at = slot === "detail" ? "" : slot.slice("detail.".length);
    const node = at ? ((detail[at] ??= {}) as Record<string, unknown>) : detail;
    node.$or = branches.map((b) => nest(b, at));
  }
  if (Object.keys(detail).length) pattern.detail = detail;
  const top = ors.get("");
  if (top) pattern.$or = top.map((b) => ({ detail: nest(b) }));
  return pattern;
}

/** `{"environment.name": atom}` → `{"environment": {"name": [...]}}`, paths taken below `under`. */
function nest(term: Term, under = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, atom] of Object.entries(term).sort(([a], [b]) => a.localeCompare(b))) {
    const parts = (under ? path.slice(under.length + 1) : path).split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]!] = matchers(atom);
  }
  return out;
}

function matchers(atom: Atom): unknown[] {
  switch (atom.op) {
    case "absent":
      return [{ exists: false }];
    case "in":
      return [...atom.values, ...atom.patterns.map((p) => ({ wildcard: toEventBridgeWildcard(p) }))];
    case "not": {
      if (!atom.patterns.length) return [{ "anything-but": atom.values }];
      // One anything-but: exact names become wildcards that match only themselves.
      const all = [...atom.patterns.map(toEventBridgeWildcard), ...atom.values.map(literalAsEventBridgeWildcard)];
      return [{ "anything-but": { wildcard: all.length === 1 ? all[0] : all } }];
    }
  }
}

export interface PatternProblem {
  index: number;
  route: string;
  /** Below `routes[index]`, e.g. `match.service`; empty for the route as a whole. */
  field: string;
  message: string;
}

/**
 * What would stop the routes from being deployed as they are: a route no event can reach, a pattern
 * EventBridge cannot express, or one over the size quota. Routes without receivers get no rule, so
 * for them only whether they can match at all matters.
 */
export function patternProblems(routes: readonly Route[], maxChars = EVENT_PATTERN_MAX_CHARS): PatternProblem[] {
  const problems: PatternProblem[] = [];
  routes.forEach((route, index) => {
    const deployed = routeReceivers(route).length > 0;
    try {
      const size = JSON.stringify(eventPattern(routes, index)).length;
      if (deployed && size > maxChars) {
        problems.push({
          index,
          route: route.name,
          field: "",
          message:
            `its EventBridge pattern would be ${size} characters, over the quota of ${maxChars}; ` +
            `fewer values, or fewer routes with continue: false before it`,
        });
      }
    } catch (err) {
      if (!(err instanceof RoutePatternError)) throw err;
      // A route without receivers is never deployed: only a route that can never match is its problem.
      if (deployed || err.reason === "unreachable") problems.push({ index, route: route.name, field: err.field, message: err.message });
    }
  });
  return problems;
}
