/**
 * Parity fuzzed without moto: for random routes (with random continue: false chains) and random events,
 * the routes `routeEvent` selects are exactly those whose `eventPattern` an independent EventBridge
 * evaluator (test/fixtures/routes/eventbridge.ts, itself checked against moto_server in
 * test/integration/routes/rules.moto.test.ts) says match the event's envelope.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LookoutEventDetail, Transition } from "../../../lib/model/event.js";
import { toEnvelope } from "../../../lib/alerts/publish.js";
import { loadConfigFile } from "../../../lib/config/load.js";
import { TRANSITIONS } from "../../../lib/config/routes.js";
import { routeEvent } from "../../../lib/routes/match.js";
import { RoutePatternError, eventPattern } from "../../../lib/config/route-patterns.js";
import type { Route, RouteMatch } from "../../../lib/config/route-types.js";
import { compilePattern, patternMatches } from "../../fixtures/routes/eventbridge.js";
import { PARITY_EVENTS, detail } from "../../fixtures/routes/parity-events.js";

const ORG_IDS = ["5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01", "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910"];
const PROJECT_IDS = ["0c5e2a44-6b1d-4f0a-8f3e-8d7a1b2c3d4e"];
const ENV_IDS = ["9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"];
const SERVICE_IDS = ["3f2e1d0c-9b8a-4765-8432-10fedcba9876"];
// Small pools so that routes and events collide often.
const POOL = {
  organization: [...ORG_IDS, "acme", "globex"],
  project: [...PROJECT_IDS, "shop", "blog"],
  environment: [...ENV_IDS, "prod", "production", "staging"],
  serviceRoute: [...SERVICE_IDS, "api", "api-*", "*-worker", "web*", "*", "a\\b*", "*i*", "db-worker"],
  serviceEvent: ["api", "api-x", "api-admin", "db-worker", "worker", "web", "webshop", "a\\b", "a*b", "i", ""],
};

const someOf = <T>(xs: readonly T[]) => fc.uniqueArray(fc.constantFrom(...xs), { minLength: 1, maxLength: 3 });

/** Each field constrained one time in four: a route with few constraints matches often enough to count. */
const sometimes = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: arb, weight: 1 });

const arbMatch: fc.Arbitrary<RouteMatch> = fc
  .record({
    kind: sometimes(someOf(["deployment", "webhook_delivery", "cluster_log", "health"] as const)),
    transition: sometimes(someOf(TRANSITIONS)),
    severity: sometimes(someOf(["critical", "error", "warning", "info"] as const)),
    organization: sometimes(someOf(POOL.organization)),
    project: sometimes(someOf(POOL.project)),
    environment: sometimes(someOf(POOL.environment)),
    service: sometimes(someOf(POOL.serviceRoute)),
  })
  .map((m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as RouteMatch);

const arbRoutes: fc.Arbitrary<Route[]> = fc
  .array(fc.record({ match: arbMatch, stops: fc.boolean() }), { minLength: 1, maxLength: 5 })
  .map((rs) => rs.map((r, i) => ({ name: `r${i}`, match: r.match, slack: [{ type: "slack", form: "webhook", webhookUrlRef: "env:X" }], continue: !r.stops })));

/** A ref as events carry it: an id from the pool (or another), a name or none. */
const arbRef = (ids: string[], names: string[]) =>
  fc.record({ id: fc.constantFrom(...ids, "00000000-0000-4000-8000-000000000000"), name: fc.option(fc.constantFrom(...names), { nil: undefined }) }).map((r) =>
    r.name === undefined ? { id: r.id } : { id: r.id, name: r.name },
  );

const arbEvent: fc.Arbitrary<LookoutEventDetail> = fc
  .record(
    {
      transition: fc.constantFrom(...TRANSITIONS),
      severity: fc.constantFrom("critical", "error", "warning", "info" as const),
      organization: arbRef(ORG_IDS, ["acme", "globex", "initech"]),
      project: arbRef(PROJECT_IDS, ["shop", "blog", "Shop"]),
      environment: arbRef(ENV_IDS, ["prod", "production", "staging", "dev"]),
      service: arbRef(SERVICE_IDS, POOL.serviceEvent),
      extra: fc.constantFrom({}, { future: { x: ["y"] } }),
    },
    { requiredKeys: ["transition", "severity", "organization", "extra"] },
  )
  .map(({ transition, extra, ...fields }) => detail("e", transition as Transition, { ...fields, ...extra }));

const envelope = (d: LookoutEventDetail) => toEnvelope(d, { account: "123456789012", region: "us-east-1", time: d.observed_at, eventId: "x" });

/** Route i's pattern, or why it has none. */
function patternOf(routes: Route[], i: number): object | RoutePatternError {
  try {
    return eventPattern(routes, i);
  } catch (err) {
    if (err instanceof RoutePatternError) return err;
    throw err;
  }
}

describe("routeEvent and eventPattern agree", () => {
  it("on the parity table", () => {
    const routes = loadConfigFile(new URL("../../fixtures/routes/parity.yaml", import.meta.url).pathname, {}).routes;
    for (const d of PARITY_EVENTS) {
      const local = routeEvent(d, routes).map((r) => r.route.name);
      const patterns = routes.filter((_, i) => patternMatches(eventPattern(routes, i), envelope(d))).map((r) => r.name);
      expect(patterns, d.id).toEqual(local);
    }
  });

  it("for random routes and random events", () => {
    let compared = 0;
    let matched = 0;
    let stopped = 0;
    fc.assert(
      fc.property(arbRoutes, fc.array(arbEvent, { minLength: 1, maxLength: 10 }), (routes, events) => {
        const patterns = routes.map((_, i) => patternOf(routes, i));
        for (const p of patterns) if (!(p instanceof Error)) compilePattern(p); // EventBridge's grammar
        for (const d of events) {
          const decisions = routeEvent(d, routes);
          const local = new Set(decisions.map((r) => r.index));
          matched += decisions.length;
          if (decisions.some((r) => r.stops && r.index < routes.length - 1)) stopped++;
          patterns.forEach((p, i) => {
            if (p instanceof RoutePatternError) {
              // Refused by check-config; an unreachable route must indeed never match.
              if (p.reason === "unreachable") expect(local.has(i)).toBe(false);
              return;
            }
            compared++;
            expect(patternMatches(p, envelope(d)), `route ${i} ${JSON.stringify(p)}\nevent ${JSON.stringify(d)}`).toBe(local.has(i));
          });
        }
      }),
      { numRuns: 800 },
    );
    // The runs must exercise matches and stops, not only agree on "no".
    expect(compared).toBeGreaterThan(3000);
    expect(matched).toBeGreaterThan(compared / 10);
    expect(stopped).toBeGreaterThan(200);
  });
});
