/**
 * How a route presents an event (lib/notify/presentation.ts): the route's severity, the mentions due,
 * the links filled from the configuration's templates.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../lib/config/load.js";
import { fillLinkTemplate } from "../../../lib/config/link-templates.js";
import { plainPresenter, presenterFor, slackMentionToken } from "../../../lib/notify/presentation.js";
import { failureSeverity, type LookoutEventDetail } from "../../../lib/model/event.js";
import { detail } from "../../fixtures/routes/parity-events.js";

const ORG = "5a1c7d3e-0b7f-4c1e-9a51-2f6f0d1e8a01";
const APP = "3f2e1d0c-9b8a-4765-8432-10fedcba9876";
const config = parseConfig(
  `platform: { url: "http://127.0.0.1:4010", token: "env:T" }
watch:
  - organization: ${ORG}
    applications:
      - { id: ${APP.toUpperCase()}, name: api, links: { logs: "https://logs.example/exec/{execution_id}", runbook: "https://wiki.example/api" } }
routes:
  - name: oncall
    slack: { channel: "#oncall", token: "env:B" }
    severity: { production: critical, preview: info, staging: warning }
    mention: ["@here", S0123ABCD, U0123ABCD]
    links: { runbook: "https://wiki.example/runbooks/{service.name}" }
  - name: team
    slack: { webhook_url: "env:H" }
    severity: warning
    mention: W0123ABCD
    mention_on: [warning, error]
  - name: quiet
    slack: { webhook_url: "env:Q" }
notify:
  links: { console: "https://console.example/{organization.id}/services/{service.id}", runbook: "https://wiki.example/oncall" }
  default: { slack: { webhook_url: "env:D" }, mention: "@channel" }
`,
  "lookout.yaml",
  {},
);
const present = presenterFor(config);

/** A deployment failure in an environment of this type, severity as Lookout raises it. */
const failure = (envType: string, extra: Partial<LookoutEventDetail> = {}) =>
  detail("a1", "failed", {
    severity: failureSeverity(envType),
    environment: { id: "e1", name: "env", type: envType },
    service: { id: APP, name: "api gateway/v2" },
    deployment: { execution_id: "x-1" },
    ...extra,
  });

describe("presenterFor", () => {
  it("overrides severity by environment type, case-insensitively, and leaves unknown types and informational events alone", () => {
    expect(present(failure("PRODUCTION"), "oncall").severity).toBe("critical");
    expect(present(failure("Staging"), "oncall").severity).toBe("warning");
    expect(present(failure("DEVELOPMENT"), "oncall").severity).toBe("error"); // not in the map: as raised
    expect(present(failure("SANDBOX"), "oncall").severity).toBe("error");
    expect(present(failure("PRODUCTION"), "team").severity).toBe("warning");
    // A recovery stays info whatever the route says: it must not turn red nor call anyone.
    const recovered = detail("r1", "recovered", { environment: { id: "e1", type: "PRODUCTION" } });
    expect(present(recovered, "team")).toMatchObject({ severity: "info", mentions: [] });
  });

  it("mentions as Slack tokens when the route's severity is one mention_on names (default critical)", () => {
    expect(present(failure("PRODUCTION"), "oncall").mentions).toEqual(["<!here>", "<!subteam^S0123ABCD>", "<@U0123ABCD>"]);
    expect(present(failure("STAGING"), "oncall").mentions).toEqual([]); // warning
    expect(present(failure("PRODUCTION"), "team").mentions).toEqual(["<@W0123ABCD>"]); // overridden to warning
    expect(present(failure("PRODUCTION"), "quiet").mentions).toEqual([]);
    expect(present(failure("PRODUCTION"), "default").mentions).toEqual(["<!channel>"]);
    expect(present(failure("PRODUCTION"), "fallback").mentions).toEqual([]);
    // An amendment or a repeat calls nobody again.
    expect(present(failure("PRODUCTION", { transition: "changes_listed", amends: "a0" }), "oncall").mentions).toEqual([]);
    expect(present(failure("PRODUCTION", { incident: { subject: "deployment:x", opened_at: "t", repeat: true } }), "oncall").mentions).toEqual([]);
    expect(["@here", "@channel", "S1", "U1", "W1"].map(slackMentionToken)).toEqual(["<!here>", "<!channel>", "<!subteam^S1>", "<@U1>", "<@W1>"]);
  });

  it("fills links: the service's override the route's, which override notify.links, by label, in the first one's place", () => {
    expect(present(failure("PRODUCTION"), "oncall").links).toEqual([
      { label: "console", url: `https://console.example/${ORG}/services/${APP}` },
      { label: "runbook", url: "https://wiki.example/api" },
      { label: "logs", url: "https://logs.example/exec/x-1" },
    ]);
    // Another service: the route's runbook, its name URL-encoded.
    const other = failure("PRODUCTION", { service: { id: "s-2", name: "api gateway/v2" } });
    expect(present(other, "oncall").links).toEqual([
      { label: "console", url: `https://console.example/${ORG}/services/s-2` },
      { label: "runbook", url: "https://wiki.example/runbooks/api%20gateway%2Fv2" },
    ]);
    // What the event lacks leaves its link out: a cluster error has no service.
    expect(present(detail("c1", "cluster_error", { cluster: { id: "c-1" } }), "team").links).toEqual([{ label: "runbook", url: "https://wiki.example/oncall" }]);
  });

  it("is the event as raised where the configuration says nothing", () => {
    const none = presenterFor(parseConfig(`platform: { url: "http://127.0.0.1:4010", token: "env:T" }\nwatch: [{ organization: ${ORG} }]\n`, "f.yaml", {}));
    const d = failure("PRODUCTION");
    expect(none(d, "anything")).toEqual(plainPresenter(d, "anything"));
    expect(none(d, "anything")).toEqual({ severity: "critical", mentions: [], links: [] });
  });
});

describe("fillLinkTemplate", () => {
  const d = failure("PRODUCTION", { record: { type: "deployment_execution", id: "r/1?x" } });
  it("URL-encodes each value, and gives nothing for a value the event lacks or a URL that is not absolute http(s)", () => {
    expect(fillLinkTemplate("https://x.example/{record.id}?alert={alert.id}", d)).toBe("https://x.example/r%2F1%3Fx?alert=a1");
    expect(fillLinkTemplate("https://x.example/{cluster.id}", d)).toBeUndefined();
    expect(fillLinkTemplate("https://x.example/{webhook.id}", { ...d, webhook: { id: "" } })).toBeUndefined();
    expect(fillLinkTemplate("https://{service.name}/", d)).toBeUndefined(); // an encoded name is no host
  });
});
