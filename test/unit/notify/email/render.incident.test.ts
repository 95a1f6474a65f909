/**
 * The email messages of incidents: golden text, HTML, subject and headers for each message of a
 * deployment, a webhook target's and a cluster's incident; an email client's view (one subject, one
 * References chain); severity and its colour bar; the route's links; digest lines with their links.
 */
import { describe, expect, it } from "vitest";
import type { LookoutEventDetail } from "../../../../lib/model/event.js";
import { INCIDENT_HEADER, renderEmail, renderEmailDigest, SEVERITY_HEADER, STATE_HEADER } from "../../../../lib/notify/email/render.js";
import { digestEntry, digestLinks } from "../../../../lib/notify/view/digest.js";
import { incidentName, resolvedPhrase } from "../../../../lib/notify/view/incident.js";
import { clusterRecoveredDetail } from "../../../../lib/alerts/build.js";
import { formatLasted } from "../../../../lib/model/time.js";
import { expectGolden, json } from "../../../golden/golden.js";
import {
  CHANGES,
  CLOSE,
  CLUSTER_CLOSE,
  CLUSTER_OPENING,
  DEPLOYMENT_INCIDENT,
  OPENING,
  PRESENTATION,
  renderIncidentEmails,
  WEBHOOK_CLOSE,
  WEBHOOK_OPENING,
} from "../../../golden/incident-inputs.js";
import { DIGEST_WINDOW, HOSTILE, hostile, heldForDigest, heldTimes } from "../../../golden/inputs.js";

const FROM = "Lookout <lookout@alerts.acme.io>";
const TO = ["oncall@acme.io"];
const BARE_AMP = /&(?!amp;|lt;|gt;|quot;|#39;)/;

const renderIncident = (details: readonly LookoutEventDetail[]) => renderIncidentEmails(details, { from: FROM, to: TO });

const NAMES = ["opening", "still-failing-1", "still-failing-2", "still-failing-3", "changes-listed", "close"];

describe("an incident's emails: golden files", () => {
  const cases: [string, LookoutEventDetail[], string[]][] = [
    ["deployment", DEPLOYMENT_INCIDENT, NAMES],
    ["webhook", [WEBHOOK_OPENING, WEBHOOK_CLOSE], ["opening", "close"]],
    ["cluster", [CLUSTER_OPENING, CLUSTER_CLOSE], ["opening", "close"]],
  ];
  for (const [kind, details, names] of cases) {
    it(`${kind}: text, HTML, subject and headers of each message`, () => {
      const messages = renderIncident(details);
      const heads: Record<string, unknown> = {};
      messages.forEach((m, i) => {
        expectGolden(`email/incident-${kind}-${names[i]}.txt`, m.text);
        expectGolden(`email/incident-${kind}-${names[i]}.html`, m.html);
        heads[names[i]!] = { subject: m.subject, headers: m.headers };
      });
      expectGolden(`email/incident-${kind}-headers.json`, json(heads));
    });
  }
});

describe("an email client's view of one incident", () => {
  const messages = renderIncident(DEPLOYMENT_INCIDENT);
  const firstId = messages[0]!.headers!["Message-ID"]!;

  it("open, three follow-ups, the changes and the close share one subject, named without a state", () => {
    expect(new Set(messages.map((m) => m.subject))).toEqual(new Set(["[Lookout] incident: api in storefront/production — deployment, opened 2026-03-02 14:07 UTC"]));
    expect(messages[0]!.subject).not.toMatch(/FAILED|RECOVERED/);
  });

  it("each follow-up replies to the first message and references it, then the one before", () => {
    expect(messages[0]!.headers!["In-Reply-To"]).toBeUndefined();
    expect(firstId).toBe(`<${OPENING.id}@alerts.acme.io>`);
    for (let i = 1; i < messages.length; i++) {
      const h = messages[i]!.headers!;
      expect(h["In-Reply-To"]).toBe(firstId);
      const refs = h.References!.split(" ");
      expect(refs[0]).toBe(firstId);
      const previous = messages[i - 1]!.headers!["Message-ID"]!;
      expect(refs).toEqual(i === 1 ? [firstId] : [firstId, previous]);
    }
    expect(new Set(messages.map((m) => m.headers!["Message-ID"])).size).toBe(messages.length);
  });

  it("the state is in the first line and a header; the incident and severity in headers", () => {
    const states = messages.map((m) => m.headers![STATE_HEADER]);
    expect(states).toEqual(["FAILED", "STILL FAILING", "STILL FAILING", "STILL FAILING", "CHANGES LISTED", "RECOVERED, resolved after 55m"]);
    messages.forEach((m, i) => expect(m.text.split("\n")[0]).toContain(states[i]));
    expect(messages.map((m) => m.headers![INCIDENT_HEADER])).toEqual(messages.map(() => OPENING.id));
    expect(messages[0]!.headers![SEVERITY_HEADER]).toBe("critical");
    // A close carries its incident's severity, and says it is resolved.
    expect(messages.at(-1)!.headers![SEVERITY_HEADER]).toBe("critical");
  });

  it("where SES replaced the first Message-ID, follow-ups reply to the one it reported", () => {
    const ses = "<0100018e2b7c9a3f-1234@email.amazonses.com>";
    const follow = renderEmail(CLOSE, { from: FROM, to: TO, incident: { first: OPENING, messageId: ses } });
    expect(follow.headers!["In-Reply-To"]).toBe(ses);
    expect(follow.headers!.References).toBe(ses);
  });

  it("the change list, an amendment, references the alert it amends when that is not the first", () => {
    const amendsLater = renderEmail({ ...CHANGES, amends: "r8LzT3uJw6YdK1fGx0pQs0" }, { from: FROM, to: TO, incident: { first: OPENING } });
    expect(amendsLater.headers!.References).toBe(`${firstId} <r8LzT3uJw6YdK1fGx0pQs0@alerts.acme.io>`);
  });
});

describe("severity, facts and links", () => {
  it("the colour bar follows the presentation's severity; a close is green", () => {
    const bar = (d: LookoutEventDetail, severity: LookoutEventDetail["severity"]) =>
      /<td width="6" bgcolor="(#[0-9a-f]{6})"/.exec(renderEmail(d, { from: FROM, to: TO, presentation: { ...PRESENTATION, severity } }).html)?.[1];
    expect(bar(OPENING, "critical")).toBe("#d93025");
    expect(bar(OPENING, "error")).toBe("#e8710a");
    expect(bar(OPENING, "warning")).toBe("#f9ab00");
    expect(bar(CLOSE, "critical")).toBe("#188038");
    expect(renderEmail(OPENING, { from: FROM, to: TO, presentation: { ...PRESENTATION, severity: "warning" } }).headers![SEVERITY_HEADER]).toBe("warning");
    // Without a presentation: the event's own severity.
    expect(renderEmail(OPENING, { from: FROM, to: TO }).headers![SEVERITY_HEADER]).toBe("critical");
  });

  it("the close says how long it lasted and what ended it", () => {
    const m = renderEmail(CLOSE, { from: FROM, to: TO, incident: { first: OPENING } });
    expect(m.text.split("\n")[0]).toBe("✅ RECOVERED, resolved after 55m — Deployment recovered: api (storefront/production)");
    expect(m.text).toMatch(/Resolved by: +DEPLOYED by dana@acme\.io via GIT/);
    expect(m.text).toMatch(/Opened: +2026-03-02 14:07:31 UTC/);
    expect(m.html).toContain("RECOVERED, resolved after 55m · was critical");
  });

  it("the route's links, in text and HTML; only http(s), escaped", () => {
    const presentation = {
      ...PRESENTATION,
      links: [...PRESENTATION.links, { label: "Bad", url: "javascript:alert(1)" }, { label: `<b>"x"</b>`, url: `https://x.example/?q="><script>` }],
    };
    const m = renderEmail(OPENING, { from: FROM, to: TO, presentation });
    expect(m.text).toMatch(/Runbook: +https:\/\/wiki\.acme\.io\/runbooks\/api\?env=production&team=payments/);
    expect(m.html).toContain(`<a href="https://wiki.acme.io/runbooks/api?env=production&amp;team=payments">Runbook</a>`);
    expect(m.html).not.toContain("javascript:");
    expect(m.text).not.toContain("javascript:");
    expect(m.html).not.toContain("<script>");
    expect(m.html).toContain(`&lt;b&gt;&quot;x&quot;&lt;/b&gt;`);
    expect(m.html).not.toMatch(BARE_AMP);
  });

  it("the change list: at most five commits, '+N more', its note; platform text escaped", () => {
    const commits = Array.from({ length: 5 }, (_, i) => ({ short_id: `c${i}${HOSTILE}`, message: HOSTILE, author: HOSTILE, link: `javascript:alert(${i})` }));
    const d: LookoutEventDetail = { ...CHANGES, deployment: { ...CHANGES.deployment!, changes: { commits, total: 120, more: true, note: HOSTILE } } };
    const m = renderEmail(hostile(d, HOSTILE, "https://ok.example/"), { from: FROM, to: TO, incident: { first: OPENING } });
    const withChanges = renderEmail({ ...hostile(d, HOSTILE), deployment: d.deployment! }, { from: FROM, to: TO, incident: { first: OPENING } });
    for (const x of [m, withChanges]) {
      expect(x.html).not.toContain("<!channel>");
      expect(x.html).not.toContain("javascript:");
      expect(x.html).not.toMatch(BARE_AMP);
    }
    expect(withChanges.text).toContain("What changed: 120+ commits");
    expect(withChanges.text).toContain("+115 or more");
    expect(withChanges.html).toContain("<li>+115 or more</li>");
    expect(withChanges.html).toContain(`Note: &lt;!channel&gt;`);
    const budgetShort: LookoutEventDetail = { ...CHANGES, deployment: { ...CHANGES.deployment!, changes: { commits: [], total: 0, note: "request budget short" } } };
    const short = renderEmail(budgetShort, { from: FROM, to: TO });
    expect(short.text).toContain("What changed: 0 commits");
    expect(short.text).toContain("Note: request budget short");
  });

  it("incident names and durations", () => {
    expect(incidentName(OPENING)).toBe("api in storefront/production — deployment");
    expect(incidentName({ ...OPENING, project: undefined, environment: undefined } as LookoutEventDetail)).toBe("api — deployment");
    expect(incidentName(WEBHOOK_OPENING)).toBe("webhook to hooks.acme.io");
    expect(incidentName(CLUSTER_OPENING)).toBe("cluster eu-prod");
    expect([45, 840, 3314, 7500, 90_000].map(formatLasted)).toEqual(["45s", "14m", "55m", "2h 05m", "1d 1h"]);
  });

  it("one duration in the summary and in the message: 3 min 35 s is 3m in both", () => {
    const incident = { subject: "cluster:c-1", opened_at: "2026-03-02T14:21:35.000Z", failures: 2, duration_sec: 215, resolved_by: "ok" };
    const close = clusterRecoveredDetail({ organization_id: "org-1", cluster_id: "c-1" }, { incident_id: "inc-9", incident, closed_at: "2026-03-02T14:25:10.000Z" }, "2026-03-02T14:25:11.000Z", { id: "c-1", name: "eu-prod" });
    expect(close.summary).toContain("over 3m");
    expect(resolvedPhrase(close)).toBe("resolved after 3m");
  });
});

describe("digest lines with their links", () => {
  const held = heldForDigest();
  const links = (d: LookoutEventDetail) => (d.kind === "deployment" ? PRESENTATION.links : []);

  it("each line carries the event's own link and the presentation's, http(s) only", () => {
    const worker = held.find((d) => d.id === "worker-0")!;
    expect(digestLinks(worker, { links }).map((l) => l.label)).toEqual(["Open", "Console", "Execution logs", "Runbook"]);
    expect(digestLinks({ ...worker, link: "javascript:x" }, { links: () => [{ label: "x", url: "ftp://a" }] })).toEqual([]);
    expect(digestEntry(worker, 300, { links }).text).toContain("worker (storefront/production) deployment failed");
  });

  it("golden: the email digest with the route's links", () => {
    const m = renderEmailDigest(held, { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, label: "route prod-oncall", links, ...heldTimes(held) });
    expect(m.html).toContain(`<a href="https://wiki.acme.io/runbooks/api?env=production&amp;team=payments">Runbook</a>`);
    expect(m.html).not.toMatch(BARE_AMP);
    expectGolden("email/digest-links.txt", m.text);
    expectGolden("email/digest-links.html", m.html);
  });
});
