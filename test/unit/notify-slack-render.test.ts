/**
 * Slack Block Kit rendering: golden files for every detail-type and for a thread reply, a quote
 * follow-up and a storm digest; escaping of platform text; Block Kit limits; a property test.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DETAIL_TYPES, type LookoutEventDetail } from "../../lib/model/event.js";
import { SLACK_LIMITS, renderSlackAlert, renderSlackDigest, slackDate, slackLink } from "../../lib/notify/slack/render.js";
import type { SlackMessage } from "../../lib/notify/types.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";
import { expectGolden, json, slug } from "../golden/golden.js";
import { DIGEST_WINDOW, FIRST, HOSTILE, RECOVERED, STILL, heldForDigest, heldTimes, hostile } from "../golden/inputs.js";
import { blockKitProblem } from "../support/slack-receiver.js";

interface TextObject {
  type: "plain_text" | "mrkdwn";
  text: string;
}

/** Every text object in a message, at any depth, and the fallback text as a mrkdwn-ish object. */
function textObjects(m: SlackMessage): TextObject[] {
  const out: TextObject[] = [{ type: "mrkdwn", text: m.text }];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      const o = v as Record<string, unknown>;
      if ((o.type === "plain_text" || o.type === "mrkdwn") && typeof o.text === "string") out.push(o as unknown as TextObject);
      Object.values(o).forEach(walk);
    }
  };
  walk(m.blocks);
  return out;
}

/** Our own mrkdwn tokens: date tokens and http(s) links. What remains must hold no control character. */
const OWN_TOKENS = /<!date\^\d+\^[^|<>]*\|[^<>]*>|<https?:\/\/[^|<>\s]+\|[^<>]*>/g;
const ENTITY_OK = /&(?!amp;|lt;|gt;)/;
const ZW = "\u200B";

function expectEscaped(m: SlackMessage) {
  for (const t of textObjects(m)) {
    const rest = t.text.replace(OWN_TOKENS, "");
    expect(rest, `raw < or > in ${JSON.stringify(t.text)}`).not.toMatch(/[<>]/);
    expect(t.text, `bare & in ${JSON.stringify(t.text)}`).not.toMatch(ENTITY_OK);
  }
}

describe("Slack rendering: golden files", () => {
  for (const type of Object.values(DETAIL_TYPES)) {
    it(`${type}`, () => {
      const m = renderSlackAlert(EXAMPLE_DETAILS[type]);
      expect(blockKitProblem(m.blocks)).toBeUndefined();
      expectGolden(`slack/${slug(type)}.json`, json(m));
    });
  }

  it("a thread reply (recovered, in the thread of the first alert)", () => {
    const m = renderSlackAlert(RECOVERED, { mode: "thread", incident: { first: FIRST, ts: "1772460482.000100" } });
    expectGolden("slack/thread-reply.json", json(m));
  });

  it("a quote follow-up (still failing, for the incoming-webhook form)", () => {
    const m = renderSlackAlert(STILL, { mode: "quote", incident: { first: FIRST } });
    expectGolden("slack/quote-follow-up.json", json(m));
  });

  it("a storm digest, saying how long each alert was held", () => {
    const held = heldForDigest();
    const m = renderSlackDigest(held, { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, ...heldTimes(held) });
    expect(JSON.stringify(m.blocks)).toContain("BUILD_ERROR (#2) (held 9m 30s)");
    expect(blockKitProblem(m.blocks)).toBeUndefined();
    expectGolden("slack/digest.json", json(m));
  });
});

describe("Slack rendering: content", () => {
  it("says what failed, where, who and when, with the commit linked and a fallback text", () => {
    const m = renderSlackAlert(FIRST);
    const all = JSON.stringify(m.blocks);
    for (const s of ["Deployment failed", "api", "storefront / production", "BUILD_ERROR", "dana@acme.io via GIT", "2m 11s", "Dana Ruiz", "Bump payment SDK to 4.2"]) {
      expect(all).toContain(s);
    }
    expect(all).not.toContain("Fixes retries on 502"); // the message's first line only
    expect(all).toContain(`"url":"${FIRST.deployment!.commit!.link}"`);
    expect(all).toContain("Commit a94a8fe");
    expect(all).toMatch(/<!date\^1772460451\^[^|]+\|Occurred 2026-03-02 14:07:31 UTC>/);
    expect(m.text).toBe(FIRST.summary);
    expect(m.unfurl_links).toBe(false);
  });

  it("webhook failures show the HTTP status and target host; cluster errors the tag, hint and docs link", () => {
    const hook = JSON.stringify(renderSlackAlert(EXAMPLE_DETAILS["Webhook Delivery Failed"]).blocks);
    expect(hook).toContain("HTTP status: 503");
    expect(hook).toContain("Target host: hooks.acme.io");
    const cluster = JSON.stringify(renderSlackAlert(EXAMPLE_DETAILS["Cluster Error"]).blocks);
    expect(cluster).toContain("InsufficientCapacity at CreateError: not enough vCPU quota");
    expect(cluster).toContain("Hint: Ask your cloud provider");
    expect(cluster).toContain('"url":"https://docs.example-platform.com/troubleshoot/quota"');
    // the detail's link is the same page: one button, not two
    expect(cluster.match(/docs\.example-platform\.com/g)).toHaveLength(1);
  });

  it("a thread reply is compact: no header, no repeat of where; a quote names the first alert", () => {
    const thread = renderSlackAlert(STILL, { mode: "thread", incident: { first: FIRST, ts: "1.1" } });
    expect((thread.blocks as { type: string }[]).some((b) => b.type === "header")).toBe(false);
    expect(JSON.stringify(thread.blocks)).not.toContain("Project / environment");
    expect(thread.blocks.length).toBeLessThan(renderSlackAlert(STILL).blocks.length);

    const quote = JSON.stringify(renderSlackAlert(STILL, { mode: "quote", incident: { first: FIRST } }).blocks);
    expect(quote).toContain("Follow-up of");
    expect(quote).toContain(`“${FIRST.summary}”`);
    expect(quote).toContain("<!date^1772460451^");
    // without the first alert at hand, a quote still says it is a follow-up, by incident id
    const bare = JSON.stringify(renderSlackAlert(STILL, { mode: "quote" }).blocks);
    expect(bare).toContain("Follow-up of an earlier alert");
    expect(bare).toContain(`incident ${STILL.incident_id}`);
  });

  it("an unparseable time is shown as text, escaped", () => {
    expect(slackDate("<!here> soon")).toBe("&lt;!here&gt; soon");
    const m = renderSlackAlert({ ...FIRST, occurred_at: "<!here> *soon*" });
    expectEscaped(m);
    expect(JSON.stringify(m.blocks)).toContain(`&lt;!here&gt; ${ZW}*${ZW}soon${ZW}*${ZW}`);
  });

  it("the digest groups, counts and says 'and K more'", () => {
    const m = renderSlackDigest(heldForDigest(), { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, perGroup: 3 });
    const all = JSON.stringify(m.blocks);
    expect(all).toContain("15 alerts held back for #ops-alerts");
    expect(all).toContain("Deployment Still Failing · storefront/production · api — 9");
    expect(all).toContain("and 6 more");
    expect(all).toContain("Webhook Delivery Failed · storefront/production · hooks.acme.io — 3");
    expect(m.text).toContain("9 Deployment Still Failing");
  });
});

describe("Slack rendering: escaping", () => {
  const types = Object.values(DETAIL_TYPES);

  it.each(types)("%s: platform text cannot mention, link or format", (type) => {
    const d = hostile(EXAMPLE_DETAILS[type], HOSTILE);
    for (const mode of ["full", "thread", "quote"] as const) {
      const m = renderSlackAlert(d, { mode, incident: { first: hostile(FIRST, HOSTILE) } });
      expectEscaped(m);
      const all = JSON.stringify(m);
      expect(all).not.toContain("<!channel>");
      expect(all).not.toContain("<@U123>");
      expect(all).not.toContain("<https://evil");
      expect(all).not.toContain("javascript:");
      // (the fallback text, first, is escaped only: see lib/notify/slack/render.ts)
      for (const t of textObjects(m).slice(1)) {
        if (t.type !== "mrkdwn") continue;
        // our mrkdwn labels aside, every formatting character in mrkdwn is fenced by zero-width spaces
        const rest = t.text.replace(OWN_TOKENS, "").replace(/\*Follow-up of( an earlier alert)?\*/g, "");
        for (const match of rest.matchAll(/[*_~`]/g)) {
          const i = match.index;
          expect(rest[i - 1] === ZW && rest[i + 1] === ZW, `unfenced ${match[0]} in ${JSON.stringify(t.text)}`).toBe(true);
        }
      }
    }
  });

  it("plain_text everywhere platform text goes; mrkdwn only for dates and links, verbatim", () => {
    const m = renderSlackAlert(hostile(FIRST, HOSTILE), { mode: "quote", incident: { first: FIRST } });
    const mrkdwn = textObjects(m).slice(1).filter((t) => t.type === "mrkdwn") as (TextObject & { verbatim?: boolean })[];
    for (const t of mrkdwn) {
      expect(t.verbatim).toBe(true);
      expect(t.text).not.toContain("deploy");
    }
    for (const t of textObjects(m).slice(1).filter((t) => t.type === "plain_text")) expect((t as { emoji?: boolean }).emoji).toBe(false);
  });

  it("links: http(s) only, escaped in mrkdwn, labels neutralised", () => {
    expect(slackLink("https://x.example/a?b=1&c=2", "*a94a8fe*")).toBe(`<https://x.example/a?b=1&amp;c=2|${ZW}*${ZW}a94a8fe${ZW}*${ZW}>`);
    for (const bad of ["javascript:alert(1)", "slack://channel?id=C1", "/relative", "ftp://x.example/", "https://user:pw@x.example/"]) {
      const m = renderSlackAlert({ ...FIRST, link: bad, deployment: { ...FIRST.deployment!, commit: { ...FIRST.deployment!.commit!, link: bad } } });
      expect(JSON.stringify(m)).not.toContain(bad.slice(0, 12));
    }
    const weird = renderSlackAlert({ ...FIRST, deployment: { ...FIRST.deployment!, commit: { ...FIRST.deployment!.commit!, link: "https://x.example/a b<c>|d\"e" } } });
    expect(JSON.stringify(weird)).toContain("https://x.example/a%20b%3Cc%3E%7Cd%22e");
  });

  it("property: no raw <, > or bare & from any input survives in any text object", () => {
    const base = Object.values(EXAMPLE_DETAILS);
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.constantFrom(...base), fc.constantFrom("full", "thread", "quote" as const), (s, d, mode) => {
        const m = renderSlackAlert(hostile(d, s, `https://h.example/${s}`), { mode: mode as "full", incident: { first: hostile(FIRST, s) } });
        expectEscaped(m);
        const safe = s.replace(/[<>&]/g, "x");
        const ref = renderSlackAlert(hostile(d, safe, `https://h.example/${safe}`), { mode: mode as "full", incident: { first: hostile(FIRST, safe) } });
        const count = (msg: SlackMessage, c: string) => textObjects(msg).reduce((n, t) => n + t.text.split(c).length - 1, 0);
        expect(count(m, "<")).toBe(count(ref, "<"));
        expect(count(m, ">")).toBe(count(ref, ">"));
      }),
      { numRuns: 300 },
    );
  });

  it("property: the digest escapes too", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme-ascii", maxLength: 40 }), { minLength: 1, maxLength: 8 }), (texts) => {
        const held = texts.map((t, i) => hostile({ ...FIRST, id: `x${i}` }, t));
        const m = renderSlackDigest(held, { channelLabel: texts[0]!, ...DIGEST_WINDOW });
        expectEscaped(m);
        expect(blockKitProblem(m.blocks)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });
});

describe("Slack rendering: Block Kit limits", () => {
  const long = (n: number, unit = "x") => unit.repeat(n);

  it("clips the header, section text and fields after escaping, never inside an entity", () => {
    const d: LookoutEventDetail = hostile(FIRST, `${long(2990)}&&&&<<<<`);
    for (const mode of ["full", "thread", "quote"] as const) {
      const m = renderSlackAlert(d, { mode, incident: { first: d } });
      expect(blockKitProblem(m.blocks)).toBeUndefined();
      expectEscaped(m);
      const header = (m.blocks as { type: string; text?: { text: string } }[]).find((b) => b.type === "header");
      if (header) expect(header.text!.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
      for (const t of textObjects(m)) expect(t.text.length).toBeLessThanOrEqual(3000);
      expect(m.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fallbackText);
    }
  });

  it("a clipped text ends in an ellipsis and keeps whole entities", () => {
    const m = renderSlackAlert({ ...FIRST, summary: `${long(2996)}&<>` });
    const section = (m.blocks as { type: string; text?: { text: string } }[])[1]!;
    expect(section.text!.text.endsWith("…")).toBe(true);
    expect(section.text!.text).toMatch(/x(&amp;)?…$/);
  });

  it("a digest of thousands stays one message of at most 50 blocks", () => {
    const held: LookoutEventDetail[] = [];
    for (let i = 0; i < 3000; i++) {
      held.push({ ...FIRST, id: `a${i}`, service: { id: `s${i % 120}`, name: `svc-${i % 120}-${long(100, "y")}` }, summary: `${long(400)} ${i}` });
    }
    const m = renderSlackDigest(held, { channelLabel: long(300, "#"), ...DIGEST_WINDOW });
    expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(blockKitProblem(m.blocks)).toBeUndefined();
    const all = JSON.stringify(m.blocks);
    expect(all).toMatch(/and \d+ more groups with \d+ alerts/);
    expect(all).toContain("3000 alerts held back");
  });

  it("more than 10 fields go into a second section", () => {
    const d = hostile(EXAMPLE_DETAILS["Webhook Delivery Failed"], "v");
    const m = renderSlackAlert(d);
    const fieldSections = (m.blocks as { fields?: unknown[] }[]).filter((b) => b.fields);
    const total = fieldSections.reduce((n, b) => n + b.fields!.length, 0);
    expect(total).toBeGreaterThan(10);
    for (const b of fieldSections) expect(b.fields!.length).toBeLessThanOrEqual(10);
    expect(blockKitProblem(m.blocks)).toBeUndefined();
  });
});
