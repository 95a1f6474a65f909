/**
 * Slack Block Kit rendering: golden files for every detail-type and for a thread reply, a quote
 * follow-up and a storm digest; escaping of platform text; Block Kit limits; a property test.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DETAIL_TYPES, type LookoutEventDetail } from "../../../../lib/model/event.js";
import { SEVERITY_COLOR, SLACK_LIMITS, renderSlackAlert, renderSlackDigest, renderSlackRepeat, renderSlackResolved, slackDate, slackLink } from "../../../../lib/notify/slack/render.js";
import { slackMessageFor, slackUpdateFor } from "../../../../lib/notify/slack/channel.js";
import type { Presentation, SlackMessage } from "../../../../lib/notify/types.js";
import { EXAMPLE_DETAILS } from "../../../fixtures/event-examples.js";
import { expectGolden, json, slug } from "../../../golden/golden.js";
import { DIGEST_WINDOW, FIRST, HOSTILE, RECOVERED, STILL, heldForDigest, heldTimes, hostile } from "../../../golden/inputs.js";
import { slackMessageProblem } from "../../../../local/receivers/block-kit.js";
import { changesView } from "../../../../lib/notify/view/alert.js";
import { CHANGES, CLUSTER_OPEN, CLUSTER_RECOVERED, CRITICAL_PRESENTATION, exampleOf, HOOK_OPEN, HOOK_RECOVERED, HOOK_REPEAT, manyChanges } from "../../../golden/slack-incident-inputs.js";

/** The top blocks and the colour bar's, as Slack shows them. */
const allBlocks = (m: SlackMessage): unknown[] => [...m.blocks, ...(m.attachments ?? []).flatMap((a) => a.blocks)];

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
  walk(allBlocks(m));
  return out;
}

/** Our own mrkdwn tokens: date tokens and http(s) links. What remains must hold no control character. */
const OWN_TOKENS = /<!date\^\d+\^[^|<>]*\|[^<>]*>|<https?:\/\/[^|<>\s]+\|[^<>]*>/g;
const ENTITY_OK = /&(?!amp;|lt;|gt;)/;
const ZW = "\u200B";

/** `mentions`: the tokens the route's presentation gave, the only mentions a message may hold. */
function expectEscaped(m: SlackMessage, mentions: readonly string[] = []) {
  for (const t of textObjects(m)) {
    const rest = mentions.reduce((text, token) => text.split(token).join(""), t.text.replace(OWN_TOKENS, ""));
    expect(rest, `raw < or > in ${JSON.stringify(t.text)}`).not.toMatch(/[<>]/);
    expect(t.text, `bare & in ${JSON.stringify(t.text)}`).not.toMatch(ENTITY_OK);
  }
}

describe("Slack rendering: golden files", () => {
  for (const type of Object.values(DETAIL_TYPES)) {
    it(`${type}`, () => {
      const m = renderSlackAlert(exampleOf(type));
      expect(slackMessageProblem(m)).toBeUndefined();
      expectGolden(`slack/${slug(type)}.json`, json(m));
    });
  }

  it("a thread reply (recovered, in the thread of the first alert)", () => {
    const m = renderSlackAlert(RECOVERED, { mode: "thread", incident: { first: FIRST, ts: "1772460482.000100" } });
    expect(slackMessageProblem(m)).toBeUndefined();
    expectGolden("slack/thread-reply.json", json(m));
  });

  // Every message an incident produces, in both Slack forms (docs/events.md, "Incidents").
  const api = { kind: "api" as const, token: "xoxb-test", channel: "#oncall" };
  const hook = { kind: "webhook" as const, url: "https://hooks.slack.com/services/T/B/x" };
  const incidentCases: Record<string, () => unknown> = {
    "critical-with-mentions-and-links": () => renderSlackAlert(FIRST, { presentation: CRITICAL_PRESENTATION }),
    "webhook-incident-opened": () => slackMessageFor(HOOK_OPEN, api),
    "repeat-in-thread": () => slackMessageFor(HOOK_REPEAT, api, { first: HOOK_OPEN, ts: "1772460482.000100" }),
    "target-recovered-broadcast-reply": () => slackMessageFor(HOOK_RECOVERED, api, { first: HOOK_OPEN, ts: "1772460482.000100" }),
    "target-recovered-update": () => slackUpdateFor(HOOK_RECOVERED, { first: HOOK_OPEN, ts: "1772460482.000100", channel: "C00000001" })?.message,
    "target-recovered-quote": () => slackMessageFor(HOOK_RECOVERED, hook, { first: HOOK_OPEN }),
    "cluster-recovered-update": () => slackUpdateFor(CLUSTER_RECOVERED, { first: CLUSTER_OPEN, ts: "1772460482.000100" })?.message,
    "cluster-recovered-broadcast-reply": () => slackMessageFor(CLUSTER_RECOVERED, api, { first: CLUSTER_OPEN, ts: "1772460482.000100" }),
    "changes-listed-update": () => slackUpdateFor(CHANGES, { first: FIRST, amended: { alert: FIRST, ts: "1772460482.000100" } }, CRITICAL_PRESENTATION)?.message,
    "changes-listed-quote": () => slackMessageFor(CHANGES, hook, { first: FIRST }),
  };
  for (const [name, render] of Object.entries(incidentCases)) {
    it(`incident: ${name}`, () => {
      const m = render() as SlackMessage;
      expect(m, name).toBeDefined();
      expect(slackMessageProblem(m)).toBeUndefined();
      expectEscaped(m, CRITICAL_PRESENTATION.mentions);
      expectGolden(`slack/${name}.json`, json(m));
    });
  }

  it("a quote follow-up (still failing, for the incoming-webhook form)", () => {
    const m = renderSlackAlert(STILL, { mode: "quote", incident: { first: FIRST } });
    expectGolden("slack/quote-follow-up.json", json(m));
  });

  it("a storm digest, saying how long each alert was held", () => {
    const held = heldForDigest();
    const m = renderSlackDigest(held, { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, ...heldTimes(held) });
    // A line with a link is mrkdwn, its platform text fenced by zero-width spaces: read as people see it.
    expect(JSON.stringify(allBlocks(m)).replaceAll(ZW, "")).toContain("BUILD_ERROR (#2) (held 9m 30s)");
    expect(JSON.stringify(allBlocks(m))).toContain("|Open>");
    expect(slackMessageProblem(m)).toBeUndefined();
    expectGolden("slack/digest.json", json(m));
  });
});

describe("Slack rendering: content", () => {
  it("names who triggered it by the platform member's name, with the address the platform recorded", () => {
    const m = renderSlackAlert({ ...FIRST, deployment: { ...FIRST.deployment!, triggered_by_name: "Dana Ruiz" } });
    expect(JSON.stringify(allBlocks(m))).toContain("Dana Ruiz (dana@acme.io) via GIT");
  });

  it("says what failed, where, who and when, with the commit linked and a fallback text", () => {
    const m = renderSlackAlert(FIRST);
    const all = JSON.stringify(allBlocks(m));
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
    const hook = JSON.stringify(allBlocks(renderSlackAlert(EXAMPLE_DETAILS["Webhook Delivery Failed"])));
    expect(hook).toContain("HTTP status: 503");
    expect(hook).toContain("Target host: hooks.acme.io");
    const cluster = JSON.stringify(allBlocks(renderSlackAlert(EXAMPLE_DETAILS["Cluster Error"])));
    expect(cluster).toContain("InsufficientCapacity at CreateError: not enough vCPU quota");
    expect(cluster).toContain("Hint: Ask your cloud provider");
    expect(cluster).toContain('"url":"https://docs.example-platform.com/troubleshoot/quota"');
    // the detail's link is the same page: one button, not two
    expect(cluster.match(/docs\.example-platform\.com/g)).toHaveLength(1);
  });

  it("a thread reply is compact: no header, no repeat of where; a quote names the first alert", () => {
    const thread = renderSlackAlert(STILL, { mode: "thread", incident: { first: FIRST, ts: "1.1" } });
    expect((allBlocks(thread) as { type: string }[]).some((b) => b.type === "header")).toBe(false);
    expect(JSON.stringify(allBlocks(thread))).not.toContain("Project / environment");
    expect(allBlocks(thread).length).toBeLessThan(allBlocks(renderSlackAlert(STILL)).length);

    const quote = JSON.stringify(allBlocks(renderSlackAlert(STILL, { mode: "quote", incident: { first: FIRST } })));
    expect(quote).toContain("Follow-up of");
    expect(quote).toContain(`“${FIRST.summary}”`);
    expect(quote).toContain("<!date^1772460451^");
    // without the first alert at hand, a quote still says it is a follow-up, by incident id
    const bare = JSON.stringify(allBlocks(renderSlackAlert(STILL, { mode: "quote" })));
    expect(bare).toContain("Follow-up of an earlier alert");
    expect(bare).toContain(`incident ${STILL.incident_id}`);
  });

  it("an unparseable time is shown as text, escaped", () => {
    expect(slackDate("<!here> soon")).toBe("&lt;!here&gt; soon");
    const m = renderSlackAlert({ ...FIRST, occurred_at: "<!here> *soon*" });
    expectEscaped(m);
    expect(JSON.stringify(allBlocks(m))).toContain(`&lt;!here&gt; ${ZW}*${ZW}soon${ZW}*${ZW}`);
  });

  it("the digest groups, counts and says 'and K more'", () => {
    const m = renderSlackDigest(heldForDigest(), { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, perGroup: 3 });
    const all = JSON.stringify(allBlocks(m));
    expect(all).toContain("15 alerts held back for #ops-alerts");
    expect(all).toContain("Deployment Still Failing · storefront/production · api — 9");
    expect(all).toContain("and 6 more");
    expect(all).toContain("Webhook Delivery Failed · storefront/production · hooks.acme.io — 3");
    expect(m.text).toContain("9 Deployment Still Failing");
  });

  it("a digest lists each group in the order its alerts happened, whatever order they were held in; one instant reads as one", () => {
    const held = heldForDigest().reverse();
    const all = JSON.stringify(allBlocks(renderSlackDigest(held, { channelLabel: "#ops-alerts", ...DIGEST_WINDOW })));
    const times = [...all.matchAll(/• (\d\d:\d\d:\d\d) UTC api \(storefront\/production\) deployment still failing/g)].map((x) => x[1]!);
    expect(times.length).toBeGreaterThan(2);
    expect(times).toEqual([...times].sort());
    const one = JSON.stringify(allBlocks(renderSlackDigest(held.slice(0, 1), { channelLabel: "#ops-alerts", from: DIGEST_WINDOW.from, to: DIGEST_WINDOW.from })));
    expect(one).toContain("At 2026-03-02 14:10:00 UTC more alerts came for this channel");
  });

  it("a digest calls whom its held alerts' routes would have called, once each, and none for repeats alone", () => {
    const held = heldForDigest();
    // The route mentions on critical alerts: the two held failures of worker are critical, the rest not.
    const presentationOf = (d: LookoutEventDetail): Presentation =>
      d.id.startsWith("worker-") ? { severity: "critical", mentions: ["<!here>", "<@U0123ABC>"], links: [] } : { severity: d.severity, mentions: [], links: [] };
    const m = renderSlackDigest(held, { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, presentationOf });
    expect(m.text.startsWith("<!here> <@U0123ABC> Lookout held back 15 alerts")).toBe(true);
    expect(allBlocks(m)[0]).toEqual({ type: "section", text: { type: "mrkdwn", text: "<!here> <@U0123ABC>", verbatim: true } });
    expect(slackMessageProblem(m)).toBeUndefined();
    const quiet = renderSlackDigest(held.slice(0, 9), { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, presentationOf: () => ({ severity: "error", mentions: [], links: [] }) });
    expect(quiet.text.startsWith("Lookout held back")).toBe(true);
    expect(JSON.stringify(allBlocks(quiet))).not.toContain("<!here>");
  });

  it("a digest lists failures before what amends them (their 'what changed'), within a severity", () => {
    const failures = ["api", "web"].map((name, i) => ({ ...FIRST, id: `f-${i}`, service: { id: `svc-${name}`, name }, summary: `${name} (storefront/production) deployment failed` }));
    const amendments = failures.map((f, i) => ({ ...EXAMPLE_DETAILS["Deployment Changes Listed"], id: `c-${i}`, severity: f.severity, service: f.service, amends: f.id }));
    const all = JSON.stringify(allBlocks(renderSlackDigest([...amendments, ...failures], { channelLabel: "#ops-alerts", ...DIGEST_WINDOW })));
    expect(all.indexOf("Deployment Failed ·")).toBeGreaterThan(-1);
    expect(all.lastIndexOf("Deployment Failed ·")).toBeLessThan(all.indexOf("Deployment Changes Listed ·"));
  });

  it("a digest line carries its route's links (console, runbook) and its own, within Block Kit; platform text stays neutral", () => {
    const held = heldForDigest().map((d, i) => (i === 0 ? { ...d, summary: "*bold* <!channel> _x_" } : d));
    const links = (d: { id: string }) => [{ label: "Runbook", url: `https://wiki.acme.io/runbooks/${d.id}` }, { label: "Bad", url: "javascript:alert(1)" }];
    const m = renderSlackDigest(held, { channelLabel: "#ops-alerts", ...DIGEST_WINDOW, perGroup: 3, links });
    expect(slackMessageProblem(m)).toBeUndefined();
    const all = JSON.stringify(allBlocks(m));
    expect(all).toContain(`<https://wiki.acme.io/runbooks/${held[0]!.id}|Runbook>`);
    expect(all).not.toContain("javascript:");
    expect(all).not.toContain("<!channel>");
    expect(all).toContain(`${ZW}*${ZW}bold${ZW}*${ZW}`);
  });
});

describe("Slack rendering: incidents", () => {
  const api = { kind: "api" as const, token: "xoxb-test", channel: "#oncall" };
  const colorOf = (m: SlackMessage) => m.attachments?.[0]?.color;

  it("a colour bar per severity: critical red, error orange, warning yellow, info and resolutions green", () => {
    for (const severity of ["critical", "error", "warning", "info"] as const) {
      const m = renderSlackAlert(FIRST, { presentation: { severity, mentions: [], links: [] } });
      expect(colorOf(m)).toBe(SEVERITY_COLOR[severity]);
      expect(JSON.stringify(m.attachments)).toContain(`*${severity[0]!.toUpperCase()}${severity.slice(1)}*`);
      expect(m.attachments![0]!.fallback).toBe(m.text);
    }
    expect([SEVERITY_COLOR.critical, SEVERITY_COLOR.error, SEVERITY_COLOR.warning, SEVERITY_COLOR.info]).toEqual(["#E01E5A", "#F2711C", "#ECB22E", "#2EB67D"]);
    expect(colorOf(renderSlackAlert(HOOK_RECOVERED))).toBe(SEVERITY_COLOR.info);
    expect(colorOf(renderSlackResolved(FIRST, RECOVERED, { severity: "critical", mentions: ["<!here>"], links: [] }))).toBe(SEVERITY_COLOR.info);
  });

  it("mentions are the presentation's tokens, in the top section and the fallback; platform text stays escaped", () => {
    const m = renderSlackAlert(hostile(FIRST, HOSTILE), { presentation: { ...CRITICAL_PRESENTATION, mentions: ["<!here>", "<@U0123ABC>", "<!channel|x>", "@here", "<https://evil.example|x>"] } });
    expect((m.blocks[0] as { text: { type: string; text: string } }).text).toEqual({ type: "mrkdwn", text: "<!here> <@U0123ABC>", verbatim: true });
    expect(m.text.startsWith("<!here> <@U0123ABC> ")).toBe(true);
    expect(JSON.stringify(m)).not.toContain("<https://evil");
    expect(JSON.stringify(m.attachments)).not.toContain("<!here>");
    expect(JSON.stringify(m.attachments)).toContain("&lt;!channel&gt;");
    // a resolution edits the message: no mention in it
    expect(JSON.stringify(renderSlackResolved(FIRST, RECOVERED, CRITICAL_PRESENTATION))).not.toContain("<!here>");
  });

  it("the resolved form keeps what changed before the failure, and counts the failures once", () => {
    const changed = changesView(exampleOf("Deployment Changes Listed"))!;
    const failing = { ...FIRST, deployment: { ...FIRST.deployment!, failure_count: 1 } };
    const m = renderSlackResolved(failing, RECOVERED, CRITICAL_PRESENTATION, changed);
    const all = JSON.stringify(m);
    expect(all).toContain("*What changed*");
    expect(all).not.toContain("Failures in a row");
    expect(slackMessageProblem(m)).toBeUndefined();
  });

  it("link buttons: the route's links first, only safe http(s), at most 3000 characters", () => {
    const long = `https://ok.example/${"a".repeat(3100)}`;
    const links = [{ label: "Console", url: "https://console.example/x" }, { label: "Bad", url: "javascript:alert(1)" }, { label: "Long", url: long }, { label: "L".repeat(200), url: "http://logs.example/y" }];
    const m = renderSlackAlert(FIRST, { presentation: { severity: "error", mentions: [], links } });
    const actions = (allBlocks(m) as { type: string; elements?: { url: string; text: { text: string } }[] }[]).find((b) => b.type === "actions")!;
    expect(actions.elements!.map((e) => e.url)).toEqual(["https://console.example/x", "http://logs.example/y"]);
    expect(actions.elements![1]!.text.text.length).toBeLessThanOrEqual(75);
    expect(slackMessageProblem(m)).toBeUndefined();
  });

  it("incident facts: the failure's number, when the incident opened, and a repeat", () => {
    const all = JSON.stringify(renderSlackAlert(HOOK_REPEAT));
    expect(all).toContain("3rd failure");
    expect(all).toContain("opened 2026-03-02");
    expect(all).toContain('"repeat"');
    const reply = slackMessageFor(HOOK_REPEAT, api, { first: HOOK_OPEN, ts: "1.1" });
    expect(reply.text).toContain("Same error again — 3rd time");
    expect(reply.thread_ts).toBe("1.1");
    expect(reply.reply_broadcast).toBeUndefined();
  });

  it("a closing event: its first message resolved in place, its reply broadcast unless the receiver says not to", () => {
    const update = slackUpdateFor(HOOK_RECOVERED, { first: HOOK_OPEN, ts: "1.1", channel: "C1" })!;
    expect(update).toMatchObject({ alertId: HOOK_OPEN.id, ts: "1.1", channel: "C1" });
    expect(update.message.text).toContain("Resolved after 14m · by HTTP 200 · 5 failures");
    expect(JSON.stringify(update.message.blocks)).toContain("✅ Resolved · Webhook delivery failed: hooks.acme.io");
    expect(slackMessageFor(HOOK_RECOVERED, api, { first: HOOK_OPEN, ts: "1.1" }).reply_broadcast).toBe(true);
    expect(slackMessageFor(HOOK_RECOVERED, { ...api, broadcastResolution: false }, { first: HOOK_OPEN, ts: "1.1" }).reply_broadcast).toBeUndefined();
    // sent in a digest: the digest is never replaced
    expect(slackUpdateFor(HOOK_RECOVERED, { first: HOOK_OPEN, ts: "1.1", inDigest: true })).toBeUndefined();
  });

  it("What changed: five commits with short id, author, first line and link, then +N more", () => {
    const m = slackUpdateFor(CHANGES, { first: FIRST, amended: { alert: FIRST, ts: "1.1" } })!.message;
    const all = JSON.stringify(m);
    expect(all).toContain("*What changed*");
    expect(all).toContain("<https://github.com/acme/storefront/commit/01c0ffee|01c0ffe> Dana Ruiz — Change number 1");
    expect(all).not.toContain("Change number 6");
    expect(all).toContain("+7 more commits");
    expect(all).not.toContain("With a body");
    expect(all).toContain("BUILD_ERROR"); // the amended alert, re-rendered
  });
});

describe("Slack rendering: escaping", () => {
  const types = Object.values(DETAIL_TYPES);

  it.each(types)("%s: platform text cannot mention, link or format", (type) => {
    const d = hostile(exampleOf(type), HOSTILE);
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
        const rest = t.text.replace(OWN_TOKENS, "").replace(/\*Follow-up of( an earlier alert)?\*/g, "").replace(/\*(What changed|Critical|Error|Warning|Info|Resolved \(was (critical|error|warning|info)\))\*/g, "");
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
        expect(slackMessageProblem(m)).toBeUndefined();
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
      expect(slackMessageProblem(m)).toBeUndefined();
      expectEscaped(m);
      const header = (allBlocks(m) as { type: string; text?: { text: string } }[]).find((b) => b.type === "header");
      if (header) expect(header.text!.text.length).toBeLessThanOrEqual(SLACK_LIMITS.headerText);
      for (const t of textObjects(m)) expect(t.text.length).toBeLessThanOrEqual(3000);
      expect(m.text.length).toBeLessThanOrEqual(SLACK_LIMITS.fallbackText);
    }
  });

  it("a clipped text ends in an ellipsis and keeps whole entities", () => {
    const m = renderSlackAlert({ ...FIRST, summary: `${long(2996)}&<>` });
    const section = (allBlocks(m) as { type: string; text?: { text: string } }[])[1]!;
    expect(section.text!.text.endsWith("…")).toBe(true);
    expect(section.text!.text).toMatch(/x(&amp;)?…$/);
  });

  it("a digest of thousands stays one message of at most 50 blocks", () => {
    const held: LookoutEventDetail[] = [];
    for (let i = 0; i < 3000; i++) {
      held.push({ ...FIRST, id: `a${i}`, service: { id: `s${i % 120}`, name: `svc-${i % 120}-${long(100, "y")}` }, summary: `${long(400)} ${i}` });
    }
    const m = renderSlackDigest(held, { channelLabel: long(300, "#"), ...DIGEST_WINDOW });
    expect(allBlocks(m).length).toBeLessThanOrEqual(SLACK_LIMITS.blocks);
    expect(slackMessageProblem(m)).toBeUndefined();
    const all = JSON.stringify(allBlocks(m));
    expect(all).toMatch(/and \d+ more groups with \d+ alerts/);
    expect(all).toContain("3000 alerts held back");
  });

  it("hostile sizes: 3,000 and 300,000 character fields and 10,000 commits stay within Block Kit, and say they were clipped", () => {
    for (const size of [3000, 300_000]) {
      const text = `${long(size)}<&>`;
      const d = { ...hostile(exampleOf("Deployment Changes Listed"), text), ...{ amends: FIRST.id } };
      const many = { ...d, deployment: { ...d.deployment!, changes: manyChanges(10_000, text).deployment!.changes! } };
      const messages: SlackMessage[] = [
        ...(["full", "thread", "quote"] as const).map((mode) => renderSlackAlert(many, { mode, incident: { first: d }, presentation: CRITICAL_PRESENTATION })),
        renderSlackResolved(hostile(FIRST, text), hostile(HOOK_RECOVERED, text), CRITICAL_PRESENTATION),
        renderSlackRepeat(hostile(HOOK_REPEAT, text)),
        slackUpdateFor(many, { first: d, amended: { alert: hostile(FIRST, text), ts: "1.1" } })!.message,
      ];
      for (const m of messages) {
        expect(slackMessageProblem(m)).toBeUndefined();
        expectEscaped(m, CRITICAL_PRESENTATION.mentions);
        expect(JSON.stringify(m)).toContain("…");
      }
      expect(JSON.stringify(messages[0])).toContain("+9995 or more commits");
    }
  });

  it("blocks past Slack's 50 are cut, and the message says so", () => {
    const d = { ...FIRST, http: undefined, deployment: { ...FIRST.deployment! } };
    const fields = Array.from({ length: 600 }, (_, i) => ({ label: `f${i}`, url: "" }));
    void fields;
    const m = renderSlackDigest(
      Array.from({ length: 200 }, (_, i) => ({ ...d, id: `x${i}`, service: { id: `s${i}`, name: `svc${i}` } })),
      { channelLabel: "#c", ...DIGEST_WINDOW },
    );
    expect(slackMessageProblem(m)).toBeUndefined();
    expect(JSON.stringify(m)).toMatch(/and \d+ more groups/);
  });

  it("more than 10 fields go into a second section", () => {
    const d = hostile(EXAMPLE_DETAILS["Webhook Delivery Failed"], "v");
    const m = renderSlackAlert(d);
    const fieldSections = (allBlocks(m) as { fields?: unknown[] }[]).filter((b) => b.fields);
    const total = fieldSections.reduce((n, b) => n + b.fields!.length, 0);
    expect(total).toBeGreaterThan(10);
    for (const b of fieldSections) expect(b.fields!.length).toBeLessThanOrEqual(10);
    expect(slackMessageProblem(m)).toBeUndefined();
  });
});
