/**
 * The HTTP receivers' configuration (README, "Receivers"): each as a route names it, its secrets as
 * references (a bad field named by its path), an id and label that never show a secret, and every
 * reference listed for the preflight and the deploy checks.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../lib/config/load.js";
import { allReceivers, receiverId, receiverLabel } from "../../../lib/config/receivers.js";
import { receiverSecretRefs } from "../../../lib/config/routes.js";
import { configProblem } from "../../support/config-problem.js";

const base = `
platform: { url: "http://127.0.0.1:4010", token: "env:PLATFORM_API_TOKEN" }
watch:
  - organization: 0b9c3a52-3f9e-4c43-9d5f-1f0f4a2b7c11
`;

const problem = (text: string) => configProblem(text);

describe("pagerduty, webhook and teams receivers", () => {
  it("a route names each; ids are stable hashes, labels show references only", () => {
    const c = parseConfig(
      `${base}routes:
  - name: oncall
    pagerduty: { routing_key: "ssm:/lookout/pd", source: storefront-prod }
    webhook:
      - { url: "env:HOOK_URL", signing_secret: "env:HOOK_SECRET" }
      - { url: "env:HOOK_URL_2", signing_secret: "env:HOOK_SECRET" }
    teams: { url: "secretsmanager:lookout/teams" }
`,
      "lookout.yaml",
      {},
    );
    const http = c.routes[0]!.http!;
    expect(http).toEqual([
      { type: "pagerduty", routingKeyRef: "ssm:/lookout/pd", source: "storefront-prod" },
      { type: "webhook", urlRef: "env:HOOK_URL", signingSecretRef: "env:HOOK_SECRET" },
      { type: "webhook", urlRef: "env:HOOK_URL_2", signingSecretRef: "env:HOOK_SECRET" },
      { type: "teams", urlRef: "secretsmanager:lookout/teams" },
    ]);
    expect(http.map(receiverLabel)).toEqual(["pagerduty ssm:/lookout/pd", "webhook env:HOOK_URL", "webhook env:HOOK_URL_2", "teams secretsmanager:lookout/teams"]);
    expect(http.map(receiverId)).toEqual([expect.stringMatching(/^pagerduty-[0-9a-f]{10}$/), expect.stringMatching(/^webhook-[0-9a-f]{10}$/), expect.stringMatching(/^webhook-/), expect.stringMatching(/^teams-/)]);
    expect(new Set(http.map(receiverId)).size).toBe(4);
    expect(allReceivers(c.routes, c.notify)).toHaveLength(4);
    expect(receiverSecretRefs(c.routes, c.notify)).toEqual([
      { field: "routes[0].pagerduty.routing_key", ref: "ssm:/lookout/pd" },
      { field: "routes[0].webhook[0].url", ref: "env:HOOK_URL" },
      { field: "routes[0].webhook[0].signing_secret", ref: "env:HOOK_SECRET" },
      { field: "routes[0].webhook[1].url", ref: "env:HOOK_URL_2" },
      { field: "routes[0].webhook[1].signing_secret", ref: "env:HOOK_SECRET" },
      { field: "routes[0].teams.url", ref: "secretsmanager:lookout/teams" },
    ]);
  });

  it("a secret written in the file, a missing key or a misspelt one is refused with its path", () => {
    expect(problem(`${base}routes: [{ name: a, pagerduty: { routing_key: "0123456789abcdef0123456789abcdef" } }]\n`)).toMatch(/routes\[0\]\.pagerduty\.routing_key: must name where the secret is kept/);
    expect(problem(`${base}routes: [{ name: a, webhook: { url: "env:U" } }]\n`)).toMatch(/routes\[0\]\.webhook\.signing_secret/);
    expect(problem(`${base}routes: [{ name: a, teams: { url: "https://prod-00.westeurope.logic.azure.com/workflows/x?sig=abc" } }]\n`)).toMatch(/routes\[0\]\.teams\.url: must name where the secret is kept/);
    expect(problem(`${base}routes: [{ name: a, teams: { url: "env:T", channel: "#x" } }]\n`)).toMatch(/routes\[0\]\.teams/);
    expect(problem(`${base}routes: [{ name: a, pagerduty: { routing_key: "env:K", source: "" } }]\n`)).toMatch(/routes\[0\]\.pagerduty\.source/);
  });

  it("notify.default and notify.fallback may name them too", () => {
    const c = parseConfig(
      `${base}notify:
  default: { teams: { url: "env:TEAMS_URL" } }
  fallback: { pagerduty: { routing_key: "env:PD_KEY" }, email: { to: platform@example.com } }
  email: { from: lookout@example.com }
`,
      "lookout.yaml",
      {},
    );
    expect(c.notify.default?.http).toEqual([{ type: "teams", urlRef: "env:TEAMS_URL" }]);
    expect(c.notify.fallback?.http).toEqual([{ type: "pagerduty", routingKeyRef: "env:PD_KEY" }]);
    expect(receiverSecretRefs(c.routes, c.notify)).toEqual([
      { field: "notify.default.teams.url", ref: "env:TEAMS_URL" },
      { field: "notify.fallback.pagerduty.routing_key", ref: "env:PD_KEY" },
    ]);
    expect(allReceivers(c.routes, c.notify).map(receiverLabel)).toEqual(["teams env:TEAMS_URL", "email platform@example.com", "pagerduty env:PD_KEY"]);
    expect(problem(`${base}notify: { default: { mention: "@here" } }
`)).toMatch(/notify\.default: needs slack, email, pagerduty, webhook or teams/);
    expect(problem(`${base}notify: { fallback: { pagerduty: { routing_key: "abc" } } }
`)).toMatch(/notify\.fallback\.pagerduty\.routing_key: must name where the secret is kept/);
  });

  it("a route with only HTTP receivers has receivers", () => {
    expect(() => parseConfig(`${base}routes: [{ name: a, teams: { url: "env:T" } }]\n`, "lookout.yaml", {})).not.toThrow();
  });
});
