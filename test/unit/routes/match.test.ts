import { describe, expect, it } from "vitest";
import { loadConfigFile, parseConfig } from "../../../lib/config/load.js";
import { covered, disjoint, globMatch } from "../../../lib/config/route-values.js";
import { decideRoutes, describeCheck, explainRoutes, routeEvent } from "../../../lib/routes/match.js";
import { coverage, eventKinds } from "../../../lib/routes/coverage.js";
import { TRANSITIONS } from "../../../lib/config/routes.js";
import { EVENT_PATTERN_MAX_CHARS, eventPattern, patternProblems } from "../../../lib/config/route-patterns.js";
import { distinctReceivers, receiverId, receiverLabel } from "../../../lib/config/receivers.js";
import { inputTemplate, ruleResources } from "../../../lib/routes/rules.js";
import type { Receiver, Route } from "../../../lib/config/route-types.js";
import { compilePattern } from "../../fixtures/routes/eventbridge.js";
import { PARITY_EVENTS, detail } from "../../fixtures/routes/parity-events.js";
import { configProblem } from "../../support/config-problem.js";
import { ConfigError } from "../../../lib/config/error.js";
import { checkPreviewRoute, PREVIEW_ROUTE } from "../../../local/runtime/preview-route.js";

const fixture = (name: string) => new URL(`../../fixtures/routes/${name}`, import.meta.url).pathname;
const sample = loadConfigFile(fixture("lookout.yaml"), {});
const parity = loadConfigFile(fixture("parity.yaml"), {});

const HEAD = `
platform: { url: "http://127.0.0.1:4010", token: "env:PLATFORM_API_TOKEN" }
watch: [{ organization: 5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01 }]
`;
const SLACK = `slack: { webhook_url: "env:HOOK" }`;

const problem = (yaml: string) => configProblem(HEAD + yaml);

const route = (name: string, match: Route["match"], stops = false): Route => ({
  name,
  match,
  slack: [{ type: "slack", form: "webhook", webhookUrlRef: "env:HOOK" }],
  continue: !stops,
});

describe("routes configuration", () => {
  it("reads routes and notify settings, with defaults", () => {
    expect(sample.routes.map((r) => [r.name, r.continue])).toEqual([
      ["no-previews", false],
      ["prod-failures", false],
      ["api-team", true],
      ["lookout-health", true],
      ["everything-else", true],
    ]);
    expect(sample.routes[1]).toEqual({
      name: "prod-failures",
      match: { kind: ["deployment"], transition: ["failed", "still_failing", "recovered"], environment: ["prod", "production"] },
      slack: [
        { type: "slack", form: "webhook", webhookUrlRef: "env:SLACK_WEBHOOK_ONCALL" },
        { type: "slack", form: "api", channel: "#oncall", tokenRef: "env:SLACK_BOT_TOKEN", broadcastResolution: true },
      ],
      email: { type: "email", to: ["oncall@example.com"] },
      continue: false,
    });
    // A single value becomes a list; a single receiver too.
    expect(sample.routes[2]!.match).toEqual({ service: ["api-*"], severity: ["error", "critical"] });
    expect(sample.routes[2]!.slack).toHaveLength(1);
    expect(sample.notify).toEqual({
      email: { from: "lookout@example.com", smtpUrlRef: "env:SMTP_URL" },
      slackRate: { perSecond: 1, burst: 10, perHour: 60 },
      fallback: { email: { type: "email", to: ["ops@example.com"] } },
      digestWithinMs: 120_000,
    });
    // Upper-case ids are read as the platform writes them.
    expect(parity.routes[2]!.match.organization).toEqual(["5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01"]);
  });

  it("has no routes and default notify settings when the file names none", () => {
    const c = parseConfig(HEAD, "lookout.yaml", {});
    expect(c.routes).toEqual([]);
    expect(c.notify).toEqual({ slackRate: { perSecond: 1, burst: 10, perHour: 60 }, digestWithinMs: 120_000 });
  });

  it("names the path of a bad field", () => {
    const cases: Array<[string, string | RegExp]> = [
      [`routes: [{ name: a, match: { severity: fatal }, ${SLACK} }]`, `routes[0].match.severity: must be one of "critical", "error", "warning", "info"`],
      [`routes: [{ name: a, match: { severity: [error, fatal] }, ${SLACK} }]`, `routes[0].match.severity[1]: must be one of "critical", "error", "warning", "info"`],
      [`routes: [{ name: a, match: { severity: [] }, ${SLACK} }]`, "routes[0].match.severity: too few items (min 1)"],
      [`routes: [{ name: a, match: { severty: error }, ${SLACK} }]`, "routes[0].match.severty: unknown field; did you mean severity?"],
      [`routes: [{ name: a, match: { kind: deploy }, ${SLACK} }]`, /^lookout\.yaml: routes\[0\]\.match\.kind: must be one of "deployment", /],
      [`routes: [{ name: a, match: { transition: exploded }, ${SLACK} }]`, /routes\[0\]\.match\.transition: must be one of "failed", /],
      [`routes: [{ name: a, match: { project: "shop-*" }, ${SLACK} }]`, "routes[0].match.project: wildcards (*) are for service names only"],
      [`routes: [{ name: a, match: { service: "api-**" }, ${SLACK} }]`, "routes[0].match.service: must not hold consecutive wildcards (**)"],
      [`routes: [{ match: {}, ${SLACK} }]`, "routes[0].name: is required"],
      [`routes: [{ name: Prod_Failures, ${SLACK} }]`, /^lookout\.yaml: routes\[0\]\.name: must be lower-case letters and digits/],
      [`routes: [{ name: a, ${SLACK} }, { name: a, ${SLACK} }]`, `routes[1].name: "a" is already the name of routes[0]`],
      // Every route's rule has a second, `<id>Solo`, for events of no incident: `team2-solo` would take team2's, in either order.
      [`routes: [{ name: team2, ${SLACK} }, { name: team2-solo, ${SLACK} }]`, "routes[1].name: would share the rule id RouteTeam2Solo with routes[0]; rename one"],
      [`routes: [{ name: team2-solo, ${SLACK} }, { name: team2, ${SLACK} }]`, "routes[1].name: would share the rule id RouteTeam2Solo with routes[0]; rename one"],
      [`routes: [{ name: default-solo, ${SLACK} }]\nnotify: { default: { slack: { webhook_url: "env:D" } } }`, "routes[0].name: would share the rule id RouteDefaultSolo with the default route's rule (notify.default); rename one"],
      [`routes: [{ name: a, slack: { webhook_url: "https://hooks.slack.com/services/T/B/x" } }]`, /^lookout\.yaml: routes\[0\]\.slack\.webhook_url: must name where the secret is kept/],
      [`routes: [{ name: a, slack: { channel: "#x" } }]`, "routes[0].slack.token: is required with channel"],
      [`routes: [{ name: a, slack: { channel: oncall, token: "env:T" } }]`, /routes\[0\]\.slack\.channel: must be a channel name like "#oncall"/],
      [`routes: [{ name: a, slack: { webhook_url: "env:H", channel: "#x", token: "env:T" } }]`, /routes\[0\]\.slack: give either webhook_url/],
      [`routes: [{ name: a, slack: {} }]`, /routes\[0\]\.slack: needs webhook_url/],
      [`routes: [{ name: a, slack: { webhook_url: "env:H", url: x } }]`, "routes[0].slack.url: unknown field"],
      [`routes: [{ name: a, email: { to: [not-an-address] } }]`, "routes[0].email.to[0]: is not a valid email"],
      [`routes: [{ name: a, match: { kind: health } }]`, "routes[0]: has no receivers: add slack, email, pagerduty, webhook or teams, or continue: false to silence what it matches"],
      [`routes: [{ name: a, email: { to: [a@example.com] } }]`, "notify.email.from: is required: routes[0] sends email"],
      [`notify: { fallback: { email: { to: [a@example.com] } } }`, "notify.email.from: is required: the fallback sends email"],
      [`notify: { slack_rate: { burst: 0 } }`, "notify.slack_rate.burst: too small (min 1)"],
      [`notify: { email: { from: lookout } }`, "notify.email.from: is not a valid email"],
      [`routes: [{ name: default, ${SLACK} }]`, /^lookout\.yaml: routes\[0\]\.name: must not be default, fallback, digest: Lookout names its own deliveries so/],
      [`routes: [{ name: fallback, ${SLACK} }]`, /routes\[0\]\.name: must not be default, fallback, digest:/],
      [`routes: [{ name: digest, ${SLACK} }]`, /routes\[0\]\.name: must not be default, fallback, digest:/],
      [`notify: { default: {} }`, "notify.default: needs slack, email, pagerduty, webhook or teams: who gets the events no route matches"],
      [`notify: { default: { email: { to: [a@example.com] } } }`, "notify.email.from: is required: the default route sends email"],
      [`notify: { default: { slack: { webhook_url: "https://hooks.slack.com/services/T/B/x" } } }`, /notify\.default\.slack\.webhook_url: must name where the secret is kept/],
      [`notify: { digest_within: 5s }`, "notify.digest_within: is not a duration of at least 10s (like 2m)"],
      [`notify: { digest_within: soon }`, "notify.digest_within: is not a duration of at least 10s (like 2m)"],
    ];
    for (const [yaml, expected] of cases) {
      const message = problem(yaml);
      if (typeof expected === "string") expect(message, yaml).toBe(`lookout.yaml: ${expected}`);
      else expect(message, yaml).toMatch(expected);
    }
  });

  it("a route that gets no rule (a silencer: no receivers, continue: false) has no rule id to share", () => {
    expect(() => parseConfig(`${HEAD}routes: [{ name: team2, ${SLACK} }, { name: team2-solo, continue: false }]`, "lookout.yaml", {})).not.toThrow();
  });

  it("keeps the terminal preview's route name for one machine: its runner refuses a route of that name, naming the route's path", () => {
    // Deployed, no preview runs: the name is a route's like any other.
    const config = parseConfig(`${HEAD}routes: [{ name: a, ${SLACK} }, { name: ${PREVIEW_ROUTE}, ${SLACK} }]`, "lookout.yaml", {});
    expect(config.routes.map((r) => r.name)).toEqual(["a", PREVIEW_ROUTE]);
    expect(() => checkPreviewRoute(config)).toThrow(ConfigError);
    expect(() => checkPreviewRoute(config)).toThrow(/^lookout\.yaml: routes\[1\]\.name: must not be terminal-preview: on one machine the terminal's Slack preview names its deliveries so$/);
    expect(() => checkPreviewRoute(parseConfig(`${HEAD}routes: [{ name: a, ${SLACK} }]`, "lookout.yaml", {}))).not.toThrow();
  });

  it("refuses routes that cannot be deployed as written", () => {
    expect(problem(`routes: [{ name: all, continue: false, ${SLACK} }, { name: b, match: { kind: health }, ${SLACK} }]`)).toBe(
      "lookout.yaml: routes[1]: never matches: route all (continue: false) takes every event it would match",
    );
    expect(problem(`routes: [{ name: a, match: { kind: health, transition: failed }, ${SLACK} }]`)).toBe(
      "lookout.yaml: routes[0].match.transition: no event has kind health with transition failed",
    );
    // EventBridge cannot say "api-* but not api-admin" about one field.
    expect(
      problem(`routes: [{ name: admin, match: { service: api-admin }, continue: false, ${SLACK} }, { name: api, match: { service: "api-*" }, ${SLACK} }]`),
    ).toMatch(/^lookout\.yaml: routes\[1\]\.match\.service: EventBridge cannot match service\.name "api-\*" while excluding "api-admin" \(matched by route admin/);
    // ...but a route with no receivers is never deployed: only whether it can match matters.
    expect(() =>
      parseConfig(HEAD + `routes: [{ name: admin, match: { service: api-admin }, continue: false, ${SLACK} }, { name: api, match: { service: "api-*" }, continue: false }]`, "f.yaml", {}),
    ).not.toThrow();
    // A pattern over EventBridge's quota.
    const many = Array.from({ length: 6 }, (_, i) => `{ name: s${i}, match: { project: [p${i}a, p${i}b], environment: [e${i}] }, continue: false, ${SLACK} }`);
    expect(problem(`routes: [${many.join(", ")}, { name: last, ${SLACK} }]`)).toMatch(
      new RegExp(`^lookout\\.yaml: routes\\[6\\]: its EventBridge pattern would (be \\d+ characters, over the quota of ${EVENT_PATTERN_MAX_CHARS}|need over)`),
    );
  });
});

describe("receivers", () => {
  const oncall: Receiver = { type: "slack", form: "api", channel: "#oncall", tokenRef: "env:SLACK_BOT_TOKEN" };
  const hook: Receiver = { type: "slack", form: "webhook", webhookUrlRef: "env:SLACK_WEBHOOK_ONCALL" };
  const mail: Receiver = { type: "email", to: ["oncall@example.com", "b@example.com"] };

  it("have short stable ids that show nothing of the secret's reference", () => {
    for (const r of [oncall, hook, mail]) {
      expect(receiverId(r)).toMatch(/^(slack|email)-[0-9a-f]{10}$/);
      expect(receiverId(r)).toBe(receiverId(structuredClone(r)));
    }
    expect(receiverId(hook)).not.toContain("SLACK");
    expect(receiverId(mail)).toBe(receiverId({ type: "email", to: ["B@example.com", "oncall@example.com"] }));
    expect(new Set([oncall, hook, mail, { ...oncall, channel: "#other" }, { ...hook, webhookUrlRef: "env:OTHER" }].map(receiverId)).size).toBe(5);
  });

  it("have labels for people", () => {
    expect([oncall, hook, mail].map(receiverLabel)).toEqual([
      "slack #oncall",
      "slack webhook env:SLACK_WEBHOOK_ONCALL",
      "email oncall@example.com, b@example.com",
    ]);
  });

  it("are counted once when several routes name them", () => {
    expect(distinctReceivers([oncall, hook, { ...oncall }, mail, hook])).toEqual([oncall, hook, mail]);
  });
});

describe("matching", () => {
  const names = (id: string) => routeEvent(PARITY_EVENTS.find((d) => d.id === id)!, parity.routes).map((r) => r.route.name);

  it("follows each operator", () => {
    expect(names("health-token")).toEqual(["kind-health", "sev-list", "after-two-stops", "catch-all"]);
    // organization by id, whatever the name; by name only with one
    expect(names("delivery-acme-other-name")).toEqual(["sev-list", "org-by-id", "catch-all"]);
    expect(names("delivery-globex")).toEqual(["sev-list", "org-by-name", "project-mixed", "catch-all"]);
    // a project by id under another name
    expect(names("deploy-shop-renamed")).toContain("project-mixed");
    // environment names are exact and case-sensitive; an absent environment or name never matches
    expect(names("deploy-prod-web")).toContain("env-names");
    for (const id of ["deploy-Production", "deploy-env-no-name", "deploy-no-env"]) expect(names(id)).not.toContain("env-names");
    // service wildcards: "*" matches any run, also none; a backslash is a plain character
    expect(names("deploy-db-worker")).toContain("svc-wild");
    expect(names("deploy-worker-bare")).not.toContain("svc-wild");
    expect(names("deploy-api-dash")).toContain("svc-wild");
    expect(names("deploy-api-bare")).not.toContain("svc-wild");
    expect(names("deploy-backslash")).toContain("svc-escape");
    expect(names("deploy-backslash-miss")).not.toContain("svc-escape");
    expect(names("deploy-svc-id")).toContain("svc-id");
  });

  it("stops after a route with continue: false", () => {
    expect(names("chain-prod-api")).toEqual(["env-names", "svc-wild", "stop-prod-api"]);
    expect(names("chain-staging")).toEqual(["svc-wild", "stop-staging"]);
    expect(names("chain-prod-web")).toEqual(["env-names", "svc-wild", "after-two-stops", "prod-after-stops", "web-after-stops", "stop-acme-deploys"]);
    // stop-acme-deploys names failed: the incident's close and its amendment follow it, and stop there too.
    expect(names("chain-acme-recovered")).toEqual(["svc-wild", "web-after-stops", "stop-acme-deploys"]);
    // An amendment goes wherever the alert it amends went.
    expect(names("chain-acme-amended")).toEqual(names("chain-acme-failed"));
    expect(names("chain-acme-amended")).toEqual(["svc-wild", "after-two-stops", "web-after-stops", "stop-acme-deploys"]);
  });

  it("gives a route what follows the transitions it names: an amendment its alert, a close its opening", () => {
    const follows = (written: Route["match"]["transition"]) =>
      TRANSITIONS.filter((t) => routeEvent(detail("f", t), [route("r", { transition: written })]).length);
    expect(follows(["failed"])).toEqual(["failed", "recovered", "changes_listed"]);
    expect(follows(["still_failing"])).toEqual(["still_failing", "changes_listed"]);
    expect(follows(["delivery_failed"])).toEqual(["delivery_failed", "target_recovered"]);
    expect(follows(["cluster_error"])).toEqual(["cluster_error", "cluster_recovered"]);
    expect(follows(["recovered", "cancelled"])).toEqual(["recovered", "cancelled"]); // nothing follows a close
    const [why] = routeEvent(detail("f", "changes_listed"), [route("r", { transition: ["failed", "still_failing"] })]).map((d) => d.why.map(describeCheck));
    expect(why).toEqual(['transition "changes_listed" follows one of failed, still_failing']);
    // The deployed pattern says the same.
    expect(eventPattern([route("r", { transition: ["delivery_failed"] })], 0)).toEqual({
      source: ["lookout"],
      "detail-type": ["Webhook Delivery Failed", "Webhook Target Recovered"],
      detail: { transition: ["delivery_failed", "target_recovered"] },
    });
  });

  it("explains every route: why it matched, the first field that did not, or which route stopped it", () => {
    const e = explainRoutes(detail("x", "failed", { environment: { id: "e1", name: "production" }, service: { id: "s1", name: "api-gateway" } }), sample.routes);
    expect(e.routes.map((o) => o.outcome)).toEqual(["not_matched", "matched", "not_considered", "not_considered", "not_considered"]);
    const [noPreviews, prod, apiTeam] = e.routes;
    expect(noPreviews).toMatchObject({ outcome: "not_matched", failed: { field: "environment", path: "environment.name", value: "production" } });
    expect(describeCheck((noPreviews as Extract<typeof noPreviews, { outcome: "not_matched" }>).failed)).toBe('environment.name "production" is not preview');
    expect(prod).toMatchObject({ outcome: "matched", decision: { stops: true } });
    const why = (prod as Extract<typeof prod, { outcome: "matched" }>).decision.why.map(describeCheck);
    expect(why).toEqual([
      'kind "deployment" is deployment',
      'transition "failed" is one of failed, still_failing, recovered',
      'environment.name "production" is one of prod, production',
    ]);
    expect(apiTeam).toMatchObject({ outcome: "not_considered", stoppedBy: "prod-failures" });
    expect(e.receivers.map(receiverLabel)).toEqual(["slack webhook env:SLACK_WEBHOOK_ONCALL", "slack #oncall", "email oncall@example.com"]);

    const absent = explainRoutes(detail("y", "cluster_error"), sample.routes).routes[2]!;
    expect(absent.outcome === "not_matched" && describeCheck(absent.failed)).toBe("service.name is absent from the event (route wants api-*)");
  });
});

describe("wildcard languages", () => {
  it("match whole names", () => {
    expect(globMatch("api-*", "api-")).toBe(true);
    expect(globMatch("*-worker", "worker")).toBe(false);
    expect(globMatch("a.b*", "axb")).toBe(false);
    expect(globMatch("*i*", "i")).toBe(true);
  });

  it("tell inclusion and overlap exactly", () => {
    expect(covered({ pattern: "api-*-x" }, [{ pattern: "api-*" }])).toBe(true);
    expect(covered({ pattern: "api-*" }, [{ pattern: "api-*-x" }])).toBe(false);
    expect(covered({ pattern: "ab*" }, [{ pattern: "a*b*" }])).toBe(true);
    expect(covered({ pattern: "a*" }, [{ pattern: "ab*" }, { exact: "a" }, { pattern: "a*" }])).toBe(true);
    expect(disjoint({ pattern: "api-*" }, [{ pattern: "web*" }, { exact: "api" }])).toBe(true);
    expect(disjoint({ pattern: "*-worker" }, [{ pattern: "db-*" }])).toBe(false);
    expect(disjoint({ pattern: "a*a" }, [{ pattern: "*aa*" }])).toBe(false);
    expect(covered({ pattern: "a*a" }, [{ pattern: "*aa*" }])).toBe(false);
  });
});

describe("EventBridge patterns", () => {
  it("narrow detail-type by transition and constrain detail fields", () => {
    expect(eventPattern(sample.routes, 1)).toEqual({
      source: ["lookout"],
      "detail-type": ["Deployment Failed", "Deployment Changes Listed", "Deployment Recovered", "Deployment Still Failing"],
      detail: { environment: { name: ["prod", "production"] }, kind: ["deployment"], transition: ["changes_listed", "failed", "recovered", "still_failing"] },
    });
    // ids and names in one list: either field
    expect(eventPattern(parity.routes, 4)).toEqual({
      source: ["lookout"],
      detail: { project: { $or: [{ id: ["0c5e2a44-6b1d-4f0a-8f3e-8d7a1b2c3d4e"] }, { name: ["blog"] }] } },
    });
    expect(eventPattern(parity.routes, 6).detail).toEqual({ service: { name: ["web", { wildcard: "*-worker" }, { wildcard: "api-*" }] } });
    expect(eventPattern(parity.routes, 7).detail).toEqual({ service: { name: [{ wildcard: "a\\\\b*" }] } });
  });

  it("express continue: false as NOT(earlier route): anything-but or absent, per field it constrains", () => {
    // after no-previews (environment: preview) alone: one $or under detail.environment
    expect(eventPattern(sample.routes, 3)).toEqual({
      source: ["lookout"],
      detail: { kind: ["health"], environment: { $or: [{ name: [{ "anything-but": ["preview"] }] }, { name: [{ exists: false }] }] } },
    });
    // a wildcard and an exact name excluded at once: one anything-but wildcard
    const afterStops = eventPattern(parity.routes, 11);
    expect(JSON.stringify(afterStops)).toContain('{"anything-but":{"wildcard":["api-*","gateway"]}}');
    // kind is implied by the transitions, and the bus never carries an event without kind or transition:
    // NOT(stop-acme-deploys) is organization.name other or absent, or transition other.
    const acme = parity.routes.findIndex((r) => r.name === "stop-acme-deploys");
    expect(eventPattern([parity.routes[acme]!, route("next", {})], 1)).toEqual({
      source: ["lookout"],
      detail: {
        $or: [
          { transition: [{ "anything-but": ["changes_listed", "failed", "recovered", "still_failing"] }] },
          { organization: { name: [{ "anything-but": ["acme"] }] } },
          { organization: { name: [{ exists: false }] } },
        ],
      },
    });
    // Conditions on different fields get their own $or (ANDed); past the places for one, two multiply.
    const catchAll = eventPattern(parity.routes, parity.routes.length - 1);
    expect(Object.keys(catchAll)).toEqual(["source", "detail", "$or"]);
    expect((catchAll.detail as { $or: unknown[] }).$or).toHaveLength(4); // NOT(stop-prod-api) and NOT(stop-staging)
    expect(catchAll.$or).toHaveLength(12); // NOT(stop-acme-deploys) × NOT(stop-blog-critical): 3 × 4
  });

  it("keep to EventBridge's grammar and quota for the sample configurations", () => {
    for (const routes of [sample.routes, parity.routes]) {
      expect(patternProblems(routes)).toEqual([]);
      routes.forEach((_, i) => {
        const pattern = eventPattern(routes, i);
        expect(JSON.stringify(pattern).length).toBeLessThanOrEqual(EVENT_PATTERN_MAX_CHARS);
        expect(() => compilePattern(pattern)).not.toThrow(); // $or of 2+, one constraint per path, valid wildcards
      });
    }
  });

  it("become one rule per route with receivers, targeting the notifiers it needs", () => {
    const targets = { slack: { Id: "slack", Arn: { "Fn::GetAtt": ["NotifySlack", "Arn"] } }, email: { Id: "email", Arn: "arn:aws:lambda:eu-west-1:1:function:email" } };
    const rules = ruleResources(sample.routes, targets, { eventBusName: { Ref: "Bus" } });
    expect(Object.keys(rules)).toEqual(["RouteProdFailures", "RouteApiTeam", "RouteLookoutHealth", "RouteEverythingElse"]);
    const prod = rules.RouteProdFailures!;
    expect(prod).toEqual({
      Type: "AWS::Events::Rule",
      Properties: {
        Name: "lookout-prod-failures",
        Description: "Lookout route prod-failures (slack and email)",
        EventBusName: { Ref: "Bus" },
        EventPattern: eventPattern(sample.routes, 1),
        State: "ENABLED",
        Targets: [
          { ...targets.slack, InputTransformer: { InputTemplate: '{"route": "prod-failures", "event": <aws.events.event.json>}' } },
          { ...targets.email, InputTransformer: { InputTemplate: '{"route": "prod-failures", "event": <aws.events.event.json>}' } },
        ],
      },
    });
    expect(rules.RouteEverythingElse!.Properties.Targets.map((t) => t.Id)).toEqual(["email"]);
    expect(JSON.parse(inputTemplate("a-b").replace("<aws.events.event.json>", "{}"))).toEqual({ route: "a-b", event: {} });
    expect(() => ruleResources(sample.routes, { slack: targets.slack })).toThrow("route prod-failures sends to email, but no email target was given");
  });

  it("give the default route a rule that takes every Lookout event, to the notifiers its receivers need", () => {
    const targets = { slack: { Id: "slack", Arn: "slack-queue" }, email: { Id: "email", Arn: "email-queue" } };
    const email = { type: "email" as const, to: ["ops@example.com"] };
    const rules = ruleResources(sample.routes, targets, { defaultRoute: { email } });
    expect(rules.RouteDefault!.Properties).toMatchObject({
      Name: "lookout-default",
      EventPattern: { source: ["lookout"] },
      Targets: [{ ...targets.email, InputTransformer: { InputTemplate: '{"route": "default", "event": <aws.events.event.json>}' } }],
    });
    expect(Object.keys(ruleResources(sample.routes, targets))).not.toContain("RouteDefault");
  });
});

describe("the default route", () => {
  const hook = (name: string): Receiver => ({ type: "slack", form: "webhook", webhookUrlRef: `env:${name}` });
  const routes = [route("prod", { environment: ["prod"] }, true), { ...route("quiet", { environment: ["preview"] }, true), slack: [] }];
  const notify = { default: { slack: hook("DEFAULT") as Extract<Receiver, { type: "slack" }> } };

  it("takes only what no route matches; a route without receivers silences on purpose", () => {
    const at = (name: string) => detail("d1", "failed", { environment: { id: "0e0e0e0e-0000-4000-8000-000000000000", name } });
    expect(decideRoutes(at("prod"), routes, notify)).toEqual([{ route: "prod", receivers: [hook("HOOK")] }]);
    expect(decideRoutes(at("staging"), routes, notify)).toEqual([{ route: "default", receivers: [hook("DEFAULT")] }]);
    expect(decideRoutes(at("preview"), routes, notify)).toEqual([{ route: "quiet", receivers: [] }]);
    expect(decideRoutes(at("staging"), routes, {})).toEqual([]);
  });

  it("agrees with the parity events: default exactly when routeEvent finds nothing", () => {
    for (const e of PARITY_EVENTS) {
      const decided = decideRoutes(e, parity.routes, notify);
      const matched = routeEvent(e, parity.routes);
      expect(decided.map((d) => d.route)).toEqual(matched.length ? matched.map((m) => m.route.name) : ["default"]);
    }
  });
});

describe("coverage (lookout check-config)", () => {
  it("says for each kind of event whether a route, the default route or nobody takes it", () => {
    const by = (c: ReturnType<typeof coverage>) => Object.fromEntries(c.map((x) => [`${x.kind}/${x.transition}`, x.by ? `${x.reach} ${x.by.join(",")}` : x.reach]));
    const c = by(coverage([
      route("prod-deploys", { kind: ["deployment"], environment: ["prod"] }),
      { ...route("no-cancelled", { transition: ["cancelled"] }, true), slack: [] },
      route("errors", { severity: ["error", "critical"] }),
    ], {}));
    expect(c["deployment/failed"]).toBe("routed");
    // A close has its incident's severity: a route by severity that takes the failure takes its recovery.
    expect(c["deployment/recovered"]).toBe("routed");
    expect(c["deployment/cancelled"]).toBe("silenced no-cancelled");
    expect(c["webhook_delivery/delivery_failed"]).toBe("nobody");
    expect(c["health/token_rejected"]).toBe("routed");
    expect(eventKinds()).toHaveLength(16);
    const fallthrough = { default: { email: { type: "email" as const, to: ["ops@example.com"] } } };
    expect(coverage([], fallthrough).every((x) => x.reach === "default")).toBe(true);
  });
});
