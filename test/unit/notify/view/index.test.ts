/**
 * The shared helpers of the notify renderers: escapers, the link check, clipping, durations, the facts
 * drawn from a detail.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderEmail } from "../../../../lib/notify/email/render.js";
import { alertView, answerText, clip, escapeHtml, escapeSlack, formatElapsed, neutralizeMrkdwn, oneLine, safeHttpUrl } from "../../../../lib/notify/view/index.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";
import { FIRST, STILL } from "../../../golden/inputs.js";

describe("escapers", () => {
  it("Slack: & < > and nothing else; & first", () => {
    expect(escapeSlack("<!channel> & <@U1|x> *b*")).toBe("&lt;!channel&gt; &amp; &lt;@U1|x&gt; *b*");
    expect(escapeSlack("&lt;")).toBe("&amp;lt;");
  });

  it("mrkdwn: formatting characters fenced by zero-width spaces", () => {
    expect(neutralizeMrkdwn("*b* _i_")).toBe("\u200B*\u200Bb\u200B*\u200B \u200B_\u200Bi\u200B_\u200B");
    expect(neutralizeMrkdwn("<x>")).toBe("&lt;x&gt;");
    // Between two letters or digits a marker can neither open nor close: left as typed, so a tag copies and searches.
    expect(neutralizeMrkdwn("CANNOT_UNINSTALL_HELM_CHART a*b")).toBe("CANNOT_UNINSTALL_HELM_CHART a*b");
    expect(neutralizeMrkdwn("a`b")).toBe("a\u200B`\u200Bb"); // a backtick is fenced wherever it is
    expect(neutralizeMrkdwn("_x_ y_ _z a_`b`")).toBe("\u200B_\u200Bx\u200B_\u200B y\u200B_\u200B \u200B_\u200Bz a\u200B_\u200B\u200B`\u200Bb\u200B`\u200B");
  });

  it("HTML: the five characters and the apostrophe", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });

  it("property: escaped text has no raw control characters and unescapes to the input", () => {
    const unSlack = (s: string) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const e = escapeSlack(s);
        expect(e).not.toMatch(/[<>]/);
        expect(e).not.toMatch(/&(?!amp;|lt;|gt;)/);
        expect(unSlack(e)).toBe(s);
        expect(escapeHtml(s)).not.toMatch(/[<>"']|&(?!amp;|lt;|gt;|quot;|#39;)/);
      }),
    );
  });
});

describe("links", () => {
  it("only absolute http(s), without credentials; normalised so nothing can break out", () => {
    expect(safeHttpUrl("https://github.com/acme/x/commit/abc")).toBe("https://github.com/acme/x/commit/abc");
    expect(safeHttpUrl("  http://x.example/a b  ")).toBe("http://x.example/a%20b");
    expect(safeHttpUrl("https://x.example/<!channel>|y")).toBe("https://x.example/%3C!channel%3E%7Cy");
    for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "data:text/html,x", "slack://open", "mailto:a@b", "/relative", "//x.example/a", "https://u:p@x.example/", "", "not a url"]) {
      expect(safeHttpUrl(bad), bad).toBeUndefined();
    }
    expect(safeHttpUrl(`https://x.example/${"a".repeat(3000)}`)).toBeUndefined();
  });
});

describe("clip", () => {
  it("keeps short text, ends long text in an ellipsis within the limit", () => {
    expect(clip("abc", 3)).toBe("abc");
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("abcdef", 4).length).toBe(4);
  });

  it("never cuts an entity or a surrogate pair", () => {
    expect(clip("ab&amp;cdef", 6)).toBe("ab…");
    expect(clip("ab&lt;cdef", 7)).toBe("ab&lt;…");
    expect(clip("a😀bc", 3)).toBe("a…");
  });

  it("property: within the limit, and an escaped text stays escaped", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.integer({ min: 1, max: 60 }), (s, max) => {
        const c = clip(escapeSlack(s), max);
        expect(c.length).toBeLessThanOrEqual(max);
        expect(c).not.toMatch(/&(?!amp;|lt;|gt;)/);
      }),
    );
  });
});

describe("facts of a detail", () => {
  it("one line, durations in words", () => {
    expect(oneLine("a\r\n\tb\u2028c")).toBe("a b c");
    expect(formatElapsed(131, "PT2M11S")).toBe("2m 11s");
    expect(formatElapsed(3725, undefined)).toBe("1h 2m 5s");
    expect(formatElapsed(undefined, "PT8M42S")).toBe("PT8M42S");
  });

  it("the same facts for Slack and email", () => {
    const v = alertView(FIRST);
    expect(v.transition).toBe("FAILED");
    expect(v.where).toBe("production/api");
    expect(v.commit).toEqual({ shortId: "a94a8fe", subject: "Bump payment SDK to 4.2", author: "Dana Ruiz", url: FIRST.deployment!.commit!.link });
    expect(v.fields.map((f) => f.label)).toEqual(["Service", "Project / environment", "Status", "Triggered by", "Duration", "Organization"]);
    expect(alertView(STILL).incidentId).toBe(FIRST.id);
    expect(alertView(FIRST).incidentId).toBeUndefined();
  });

  it("an unknown transition (a newer version's) still renders", () => {
    const d = { ...EXAMPLE_DETAILS["Lookout Health"], transition: "disk_full" as never, health: undefined };
    const v = alertView(d);
    expect(v.transition).toBe("HEALTH DISK FULL");
    expect(v.detailType).toBe("Lookout Health");
  });

  it("a follow-up can reply to the Message-ID the first email really went out with (SES rewrites it)", () => {
    const m = renderEmail(STILL, { from: "lookout@acme.io", to: [], firstMessageId: "<0100018e-abc@email.amazonses.com>" });
    expect(m.headers!["In-Reply-To"]).toBe("<0100018e-abc@email.amazonses.com>");
    expect(m.headers!.References).toBe("<0100018e-abc@email.amazonses.com>");
  });
});

describe("a webhook target's answer, as a person reads it", () => {
  it("an HTML page is its words: tags, scripts, styles and comments out, entities decoded; anything else as sent", () => {
    const page = "<html><head><style>h1{color:red}</style></head><body><h1>500 Internal Server Error</h1>\n<!-- trace 9 -->" +
      "<p>upstream `timeout` &amp; retry &lt;later&gt;<script>alert(1)</script> yyyy</p>";
    expect(answerText(page)).toBe("500 Internal Server Error upstream `timeout` & retry <later> yyyy");
    // Cut short by the excerpt's clip, inside a tag or a script: what is left of it goes too.
    expect(answerText("<p>Bad gateway</p><script>var x = '")).toBe("Bad gateway");
    expect(answerText("<p>Bad gateway</p><a href=\"http")).toBe("Bad gateway");
    expect(answerText("<script>only()</script>")).toBe("(an HTML page with no text)");
    expect(answerText('  {"error":"quota exceeded","limit":5}  ')).toBe('{"error":"quota exceeded","limit":5}');
    expect(answerText("a < b and c > d")).toBe("a < b and c > d");
    expect(answerText("expected <id>, got 5")).toBe("expected <id>, got 5"); // no page: as sent
    expect(answerText("<p>caf&#233; &#x2014; don&#39;t &AMP; &#0;</p>")).toBe("café — don't &");
    const hook = EXAMPLE_DETAILS["Webhook Delivery Failed"];
    const v = alertView({ ...hook, http: { ...hook.http!, response_excerpt: page } });
    expect(v.notes).toContainEqual({ label: "Response", value: "500 Internal Server Error upstream `timeout` & retry <later> yyyy" });
  });
});

