/**
 * Email rendering: golden text and HTML parts for every detail-type, a follow-up and a digest; subjects
 * for an inbox list; threading headers; HTML escaping (examples and a property test). The messages of
 * incidents: test/unit/notify/email/render.incident.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DETAIL_TYPES } from "../../../../lib/model/event.js";
import { ALERT_ID_HEADER, alertMessageId, domainOf, renderEmail, renderEmailDigest } from "../../../../lib/notify/email/render.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";
import { expectGolden, json, slug } from "../../../golden/golden.js";
import { exampleOf } from "../../../golden/incident-inputs.js";
import { DIGEST_WINDOW, heldTimes, FIRST, HOSTILE, RECOVERED, STILL, heldForDigest, hostile } from "../../../golden/inputs.js";

const FROM = "Lookout <lookout@alerts.acme.io>";
const TO = ["oncall@acme.io"];

/** Our template's tags; anything else that looks like a tag came from the input unescaped. */
const BARE_AMP = /&(?!amp;|lt;|gt;|quot;|#39;)/;

describe("email rendering: golden files", () => {
  for (const type of Object.values(DETAIL_TYPES)) {
    it(`${type}`, () => {
      const m = renderEmail(exampleOf(type), { from: FROM, to: TO });
      expectGolden(`email/${slug(type)}.txt`, m.text);
      expectGolden(`email/${slug(type)}.html`, m.html);
    });
  }

  it("a follow-up (recovered) quoting the first alert", () => {
    const m = renderEmail(RECOVERED, { from: FROM, to: TO, incident: { first: FIRST } });
    expectGolden("email/follow-up.txt", m.text);
    expectGolden("email/follow-up.html", m.html);
  });

  it("a storm digest, saying how long each alert was held", () => {
    const held = heldForDigest();
    const m = renderEmailDigest(held, { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, label: "route prod-oncall", ...heldTimes(held) });
    expect(m.text).toContain("Cluster eu-prod InsufficientCapacity at CreateError: not enough vCPU quota in eu-west-3 (held 45m 20s)");
    expectGolden("email/digest.txt", m.text);
    expectGolden("email/digest.html", m.html);
  });

  it("subjects and headers", () => {
    const subjects: Record<string, unknown> = {};
    for (const type of Object.values(DETAIL_TYPES)) {
      const m = renderEmail(exampleOf(type), { from: FROM, to: TO });
      subjects[type] = { subject: m.subject, headers: m.headers };
    }
    const f = renderEmail(RECOVERED, { from: FROM, to: TO, incident: { first: FIRST } });
    subjects["follow-up"] = { subject: f.subject, headers: f.headers };
    const d = renderEmailDigest(heldForDigest(), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, label: "route prod-oncall" });
    subjects.digest = { subject: d.subject, headers: d.headers };
    expectGolden("email/subjects.json", json(subjects));
  });
});

describe("email rendering: subject and threading", () => {
  it("an incident's messages are titled by the incident, without state; the rest by transition and place", () => {
    // The subject ends with when the incident opened, so that the next incident of a service is a conversation of its own.
    const opened = / opened \d{4}-\d\d-\d\d \d\d:\d\d UTC$/;
    expect(renderEmail(exampleOf("Deployment Failed"), { from: FROM, to: TO }).subject).toMatch(/, opened 2026-03-02 14:07 UTC$/);
    const subject = (type: keyof typeof EXAMPLE_DETAILS) => renderEmail(exampleOf(type), { from: FROM, to: TO }).subject.replace(new RegExp(`,${opened.source}`), "");
    const api = "[Lookout] incident: api in storefront/production — deployment";
    expect(subject("Deployment Failed")).toBe(api);
    expect(subject("Deployment Still Failing")).toBe(api);
    expect(subject("Deployment Recovered")).toBe(api);
    expect(subject("Deployment Changes Listed")).toBe(api);
    expect(subject("Webhook Delivery Failed")).toBe("[Lookout] incident: webhook to hooks.acme.io");
    expect(subject("Webhook Target Recovered")).toBe("[Lookout] incident: webhook to hooks.acme.io");
    expect(subject("Cluster Error")).toBe("[Lookout] incident: cluster eu-prod");
    expect(subject("Cluster Recovered")).toBe("[Lookout] incident: cluster eu-prod");
    // No incident: a cancellation while the service was healthy, Lookout's own health.
    expect(subject("Deployment Cancelled")).toBe("[Lookout] CANCELLED staging/worker — CANCELED");
    expect(subject("Lookout Health")).toBe("[Lookout] HEALTH TOKEN REJECTED organization:acme — 4 failures in a row");
    const named = { ...EXAMPLE_DETAILS["Webhook Delivery Failed"], webhook: { id: "w1", name: "deploy-notify" } };
    expect(renderEmail(named, { from: FROM, to: TO }).subject).toMatch(/^\[Lookout\] incident: webhook deploy-notify to hooks\.acme\.io, opened /);
  });

  it("a subject is one line, however the platform's names look", () => {
    const m = renderEmail(hostile(FIRST, "a\r\nBcc: evil@x.example\n"), { from: FROM, to: TO });
    expect(m.subject).not.toMatch(/[\r\n]/);
    expect(m.subject.length).toBeLessThanOrEqual(200);
  });

  it("a long name is clipped in an incident's subject, never its opening time: two incidents stay two conversations", () => {
    const named = (opened: string) => renderEmail(hostile({ ...FIRST, incident: { ...FIRST.incident!, opened_at: opened } }, "n".repeat(300)), { from: FROM, to: TO }).subject;
    const [a, b] = [named("2026-03-02T14:00:00Z"), named("2026-03-02T16:00:00Z")];
    expect(a).toMatch(/…, opened 2026-03-02 14:00 UTC$/);
    expect(a).not.toBe(b);
    expect(a.length).toBeLessThanOrEqual(200);
  });

  it("every alert has a stable Message-ID; follow-ups reply to the first alert's", () => {
    const first = renderEmail(FIRST, { from: FROM, to: TO });
    expect(first.headers!["Message-ID"]).toBe("<Hq2b7XkP0vQm4sN9cT1eWa@alerts.acme.io>");
    expect(first.headers!["In-Reply-To"]).toBeUndefined(); // incident_id is its own id
    expect(renderEmail(FIRST, { from: FROM, to: TO }).headers).toEqual(first.headers);
    expect(first.headers![ALERT_ID_HEADER]).toBe(FIRST.id);

    for (const incident of [{ first: FIRST }, undefined]) {
      const follow = renderEmail(STILL, { from: FROM, to: TO, ...(incident ? { incident } : {}) });
      expect(follow.headers!["Message-ID"]).toBe("<r8LzT3uJw6YdK1fGx0pQsB@alerts.acme.io>");
      expect(follow.headers!["In-Reply-To"]).toBe(first.headers!["Message-ID"]);
      expect(follow.headers!.References).toBe(first.headers!["Message-ID"]);
    }
    expect(renderEmail(STILL, { from: FROM, to: TO, incident: { first: FIRST } }).text).toContain(`> ${FIRST.summary}`);
  });

  it("Message-IDs are well formed whatever the ids and sender look like", () => {
    expect(domainOf("lookout@Acme.IO")).toBe("acme.io");
    expect(domainOf("no address")).toBe("lookout.invalid");
    expect(alertMessageId("a b<c>@d", "x@y.example")).toBe("<a_b_c__d@y.example>");
  });
});

describe("email rendering: escaping", () => {
  it.each(Object.values(DETAIL_TYPES))("%s: platform text is escaped in the HTML; links are http(s) only", (type) => {
    const m = renderEmail(hostile(exampleOf(type), HOSTILE, "javascript:alert(1)"), { from: FROM, to: TO, incident: { first: hostile(FIRST, HOSTILE) } });
    expect(m.html).not.toContain("<!channel>");
    expect(m.html).not.toContain("<https://evil");
    expect(m.html).not.toContain("<@U123>");
    expect(m.html).not.toContain("javascript:");
    expect(m.html).not.toMatch(BARE_AMP);
    expect(m.html).toContain("&lt;!channel&gt; *deploy*");
    expect(m.html).toContain("&amp;amp;");
    expect(m.text).toContain("<!channel> *deploy*"); // plain text is shown as is
  });

  it("attribute values cannot be broken out of", () => {
    const link = `https://x.example/"onmouseover="alert(1)'<b>`;
    const m = renderEmail({ ...FIRST, deployment: { ...FIRST.deployment!, commit: { ...FIRST.deployment!.commit!, link } } }, { from: FROM, to: TO });
    const hrefs = [...m.html.matchAll(/href="([^"]*)"/g)].map((x) => x[1]!);
    expect(hrefs).toContain("https://x.example/%22onmouseover=%22alert(1)&#39;%3Cb%3E");
    expect(m.html).not.toContain("onmouseover=\"");
  });

  it("property: the HTML has as many raw <, > and \" as with harmless input, and no bare &", () => {
    const base = Object.values(DETAIL_TYPES).map(exampleOf);
    const count = (s: string, c: string) => s.split(c).length - 1;
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.constantFrom(...base), fc.boolean(), (s, d, followUp) => {
        const render = (t: string) =>
          renderEmail(hostile(d, t, `https://h.example/${t}`), { from: FROM, to: TO, ...(followUp ? { incident: { first: hostile(FIRST, t) } } : {}) });
        const m = render(s);
        const ref = render(s.replace(/[<>&"']/g, "x"));
        for (const c of ["<", ">", '"']) expect(count(m.html, c)).toBe(count(ref.html, c));
        expect(m.html).not.toMatch(BARE_AMP);
        expect(m.subject).not.toMatch(/[\r\n]/);
      }),
      { numRuns: 300 },
    );
  });

  it("property: the digest escapes too", () => {
    // One harmless stand-in per special character, outside what the generator makes: texts that
    // differ stay different, so the digest groups them the same way in both renderings.
    const harmless = (t: string) => t.replace(/[<>&"']/g, (c) => String.fromCharCode(0xe000 + "<>&\"'".indexOf(c)));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme-ascii", maxLength: 40 }), { minLength: 1, maxLength: 6 }), (texts) => {
        const held = texts.map((t, i) => hostile({ ...FIRST, id: `x${i}` }, t));
        const m = renderEmailDigest(held, { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, label: texts[0]! });
        const ref = renderEmailDigest(
          texts.map((t, i) => hostile({ ...FIRST, id: `x${i}` }, harmless(t))),
          { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, label: harmless(texts[0]!) },
        );
        expect(m.html.split("<").length).toBe(ref.html.split("<").length);
        expect(m.html).not.toMatch(BARE_AMP);
      }),
      { numRuns: 200, examples: [[["&", "'", ""]]] },
    );
  });
});

describe("hostile sizes", () => {
  it("3,000 and 300,000 character values: every text clipped to a readable message, the digest too", () => {
    for (const size of [3000, 300_000]) {
      const text = `${"x".repeat(size)}<&>`;
      const details = [...Object.values(DETAIL_TYPES).map((t) => hostile(exampleOf(t), text)), hostile(RECOVERED, text)];
      const messages = [
        ...details.map((d) => renderEmail(d, { from: FROM, to: TO, incident: { first: hostile(FIRST, text) } })),
        renderEmailDigest(details.map((d, i) => ({ ...d, id: `a${i}` })), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to }),
        // A flood: more services than a digest shows groups, each named at that size.
        renderEmailDigest(Array.from({ length: 60 }, (_, i) => hostile({ ...FIRST, id: `f${i}` }, `${i}-${text}`)), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to }),
      ];
      for (const m of messages) {
        // A message names about twenty values: at most 3,000 characters each (escaped in the HTML), whatever the input's size.
        expect(m.text.length).toBeLessThan(100_000);
        expect(m.html.length).toBeLessThan(150_000);
        expect(m.subject.length).toBeLessThanOrEqual(200);
      }
      if (size > 3000) for (const m of messages) expect(m.text).toContain("…");
      // Links just under what a link may be (3,000), on every line of a full digest: still a bounded message.
      const linked = renderEmailDigest(Array.from({ length: 500 }, (_, i) => ({ ...hostile({ ...FIRST, id: `l${i}` }, `${i % 60}-x`, `https://ok.example/${"l".repeat(2_900)}`) })), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to });
      expect(linked.text.length + linked.html.length).toBeLessThan(1_000_000);
      expect(messages.at(-1)!.text).toContain("and 10 more groups (10 alerts)");
    }
  });
});

describe("email digest", () => {
  it("one message: counts per group, first summaries, 'and K more', a stable Message-ID", () => {
    const held = heldForDigest();
    const m = renderEmailDigest(held, { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to, perGroup: 2 });
    expect(m.subject).toBe("[Lookout] DIGEST 15 alerts held back — 9 Deployment Still Failing, 2 Deployment Failed, 1 Cluster Error, 3 Webhook Delivery Failed");
    expect(m.text).toContain("Deployment Still Failing · storefront/production · api — 9");
    expect(m.text).toContain("and 7 more");
    expect(m.html).toContain("<li>and 7 more</li>");
    const again = renderEmailDigest([...held].reverse(), { from: FROM, to: TO, since: DIGEST_WINDOW.from, until: DIGEST_WINDOW.to });
    expect(again.headers!["Message-ID"]).toBe(m.headers!["Message-ID"]);
  });
});
