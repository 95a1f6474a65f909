/**
 * What the HTTP receivers are sent, pure: golden payloads for every message of a deployment, a webhook
 * target's and a cluster's incident (PagerDuty events, the generic webhook's body, Teams' cards), and
 * their digests; PagerDuty's limits and dedup keys; the webhook's signature; Teams' escaping of
 * platform text.
 */
import { describe, expect, it } from "vitest";
import type { LookoutEventDetail } from "../../../lib/model/event.js";
import { CUSTOM_DETAILS_MAX_BYTES, dedupKeyOf, PAGERDUTY_SUMMARY_MAX, renderPagerDutyDigest, renderPagerDutyEvent } from "../../../lib/notify/pagerduty/render.js";
import { escapeCardText, renderTeamsAlert, renderTeamsDigest, TEAMS_DIGEST_GROUPS, TEAMS_MESSAGE_MAX_BYTES } from "../../../lib/notify/teams/render.js";
import { incidentRole, OMITTED_LISTED, renderWebhookAlert, renderWebhookDigest, verifyWebhookSignature, WEBHOOK_BODY_MAX_BYTES, webhookSignature } from "../../../lib/notify/webhook/render.js";
import type { IncidentRef } from "../../../lib/notify/types.js";
import { expectGolden, json } from "../../golden/golden.js";
import { CLUSTER_CLOSE, CLUSTER_OPENING, DEPLOYMENT_INCIDENT, PRESENTATION, presentationOf, WEBHOOK_CLOSE, WEBHOOK_OPENING } from "../../golden/incident-inputs.js";
import { DIGEST_WINDOW, HOSTILE, hostile, heldForDigest, heldTimes } from "../../golden/inputs.js";
import { EXAMPLE_DETAILS } from "../../fixtures/event-examples.js";
import { answerReason, HttpDeliveryError, httpSender } from "../../../lib/notify/http/post.js";

const NAMES = ["opening", "still-failing-1", "still-failing-2", "still-failing-3", "changes-listed", "close"];
const CASES: [string, LookoutEventDetail[], string[]][] = [
  ["deployment", DEPLOYMENT_INCIDENT, NAMES],
  ["webhook", [WEBHOOK_OPENING, WEBHOOK_CLOSE], ["opening", "close"]],
  ["cluster", [CLUSTER_OPENING, CLUSTER_CLOSE], ["opening", "close"]],
];
/** As the delivery core hands it over: a follow-up with the incident its receiver shows. */
const refOf = (first: LookoutEventDetail, d: LookoutEventDetail): IncidentRef | undefined => (d === first ? undefined : { first, shown: true });

const digestWindow = (held: LookoutEventDetail[]) => ({ ...DIGEST_WINDOW, id: "digest-0123456789", ...(() => { const t = heldTimes(held); return { heldAt: t.heldAt, at: t.sentAt }; })() });

describe("PagerDuty Events API v2", () => {
  for (const [kind, details, names] of CASES) {
    it(`${kind}: one PagerDuty alert, triggered by the opening and follow-ups, resolved by the close`, () => {
      const events = details.map((d) => renderPagerDutyEvent(d, { presentation: presentationOf(d) }));
      expectGolden(`pagerduty/incident-${kind}.json`, json(Object.fromEntries(names.map((n, i) => [n, events[i]]))));
      expect(new Set(events.map((e) => e.dedup_key))).toEqual(new Set([details[0]!.id]));
      expect(events.map((e) => e.event_action)).toEqual(details.map((_, i) => (i === details.length - 1 ? "resolve" : "trigger")));
    });
  }

  it("the route's severity, links and source; Lookout's health folds by check and subject", () => {
    const e = renderPagerDutyEvent(DEPLOYMENT_INCIDENT[0]!, { presentation: { ...PRESENTATION, severity: "warning" }, source: "storefront-prod" });
    expect(e.payload).toMatchObject({ severity: "warning", source: "storefront-prod" });
    expect(e.links?.map((l) => l.text)).toEqual(expect.arrayContaining(PRESENTATION.links.map((l) => l.label)));
    const health = EXAMPLE_DETAILS["Lookout Health"];
    expect(dedupKeyOf(health)).toBe(dedupKeyOf({ ...health, id: "another-occurrence" }));
    expect(renderPagerDutyEvent(health).event_action).toBe("trigger");
  });

  it("the summary within 1024 characters, custom_details bounded and redacted", () => {
    const long = "x".repeat(5000);
    const secret = "ghp_" + "a".repeat(36);
    const d = { ...DEPLOYMENT_INCIDENT[0]!, summary: long, error: { tag: "E", message: `${long} token ${secret}` } };
    const e = renderPagerDutyEvent(d);
    expect(e.payload!.summary.length).toBeLessThanOrEqual(PAGERDUTY_SUMMARY_MAX);
    const details = JSON.stringify(e.payload!.custom_details);
    expect(Buffer.byteLength(details)).toBeLessThanOrEqual(CUSTOM_DETAILS_MAX_BYTES);
    expect(details).not.toContain(secret);
  });

  it("a digest: per incident its latest trigger (counting what was held), then its resolve if it closed", () => {
    const held = heldForDigest();
    const events = renderPagerDutyDigest(held, { presentationOf, digestId: "digest-0123456789" });
    expectGolden("pagerduty/digest.json", json(events));
    const keys = events.map((e) => e.dedup_key);
    expect(new Set(keys).size).toBe(keys.length);
    // The close resolves, whatever was held after it (an amendment arriving late).
    const closedHere = renderPagerDutyDigest([DEPLOYMENT_INCIDENT[1]!, DEPLOYMENT_INCIDENT[5]!, DEPLOYMENT_INCIDENT[4]!]);
    expect(closedHere.map((e) => e.event_action)).toEqual(["trigger", "resolve"]);
    expect(closedHere[0]!.payload!.custom_details).toMatchObject({ held_in_digest: 2, alert_id: DEPLOYMENT_INCIDENT[4]!.id });
  });
});

describe("generic webhook", () => {
  for (const [kind, details, names] of CASES) {
    it(`${kind}: the event with its place in the incident`, () => {
      const bodies = details.map((d) => JSON.parse(renderWebhookAlert(d, refOf(details[0]!, d), presentationOf(d))) as unknown);
      expectGolden(`webhook/incident-${kind}.json`, json(Object.fromEntries(names.map((n, i) => [n, bodies[i]]))));
    });
  }

  it("roles: opening, follow-up, repeat, amendment, close; a follow-up standing for the incident names no root", () => {
    expect(DEPLOYMENT_INCIDENT.map(incidentRole)).toEqual(["opening", "follow_up", "follow_up", "repeat", "amendment", "close"]);
    const alone = JSON.parse(renderWebhookAlert(DEPLOYMENT_INCIDENT[1]!, undefined)) as { incident: Record<string, unknown> };
    expect(alone.incident).not.toHaveProperty("root_alert_id");
  });

  it("a digest lists what fits in 256 KB and names the rest", () => {
    const held = heldForDigest();
    expectGolden("webhook/digest.json", json(JSON.parse(renderWebhookDigest(held, digestWindow(held), presentationOf))));
    const big = Array.from({ length: 40 }, (_, i) => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id: `big-${i}`, summary: "y".repeat(20_000) }));
    const body = renderWebhookDigest(big, digestWindow(big));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(WEBHOOK_BODY_MAX_BYTES);
    const parsed = JSON.parse(body) as { held: unknown[]; omitted: string[] };
    expect(parsed.held.length + parsed.omitted.length).toBe(40);
    expect(parsed.omitted.length).toBeGreaterThan(0);
  });

  it("a storm of 10,000 held alerts is still one body under 256 KB: what fits, the first 100 others named, all counted", () => {
    const storm = Array.from({ length: 10_000 }, (_, i) => ({ ...EXAMPLE_DETAILS["Deployment Failed"], id: `storm-${String(i).padStart(5, "0")}-${"k".repeat(40)}` }));
    const body = renderWebhookDigest(storm, digestWindow(storm));
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(WEBHOOK_BODY_MAX_BYTES);
    const parsed = JSON.parse(body) as { held: unknown[]; omitted: string[]; omitted_count: number };
    expect(parsed.held.length).toBeGreaterThan(0);
    expect(parsed.omitted).toHaveLength(OMITTED_LISTED);
    expect(parsed.held.length + parsed.omitted_count).toBe(10_000);
  });

  it("an alert over 256 KB has its text clipped, its ids kept", () => {
    const d = { ...EXAMPLE_DETAILS["Deployment Failed"], summary: "z".repeat(300_000) };
    const body = renderWebhookAlert(d);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(WEBHOOK_BODY_MAX_BYTES);
    expect((JSON.parse(body) as { detail: LookoutEventDetail }).detail.id).toBe(d.id);
  });

  it("the signature: HMAC-SHA256 of timestamp.body, checked in constant time within five minutes", () => {
    // The value a receiver computes with `printf '1700000000.{}' | openssl dgst -sha256 -hmac s3cret`.
    const sig = webhookSignature("s3cret", 1_700_000_000, "{}");
    expect(sig).toBe("v1=97926816e98fbb41ccb1673225ff29a2f35369099990e1b1561651e7bd097ebf");
    const at = 1_700_000_000_000;
    expect(verifyWebhookSignature("s3cret", { signature: sig, timestamp: "1700000000" }, "{}", at)).toEqual({ ok: true });
    expect(verifyWebhookSignature("s3cret", { signature: sig, timestamp: "1700000000" }, "{ }", at)).toMatchObject({ ok: false });
    expect(verifyWebhookSignature("other", { signature: sig, timestamp: "1700000000" }, "{}", at)).toMatchObject({ ok: false });
    expect(verifyWebhookSignature("s3cret", { signature: sig, timestamp: "1700000000" }, "{}", at + 301_000)).toMatchObject({ ok: false, reason: "stale" });
  });
});

describe("Microsoft Teams (Workflows webhook)", () => {
  for (const [kind, details, names] of CASES) {
    it(`${kind}: a card each, follow-ups and the close quoting the incident's first alert`, () => {
      const cards = details.map((d) => renderTeamsAlert(d, { ...(refOf(details[0]!, d) ? { incident: refOf(details[0]!, d)! } : {}), presentation: presentationOf(d) }));
      expectGolden(`teams/incident-${kind}.json`, json(Object.fromEntries(names.map((n, i) => [n, cards[i]]))));
      const text = (i: number) => JSON.stringify(cards[i]);
      expect(text(0)).not.toContain("Follow-up of");
      expect(text(cards.length - 1)).toContain("Follow-up of");
      expect(text(cards.length - 1)).toContain("✅ Resolved");
      for (const c of cards) expect(c.attachments[0]!.content.version).toBe("1.4");
    });
  }

  it("a digest card of a storm over 10,000 subjects stays one card Teams takes, saying how many more groups", () => {
    const storm = Array.from({ length: 10_000 }, (_, i) => ({
      ...EXAMPLE_DETAILS["Deployment Failed"], id: `storm-${i}`,
      service: { ...EXAMPLE_DETAILS["Deployment Failed"].service!, id: `svc-${i}`, name: `service-${i}-${"n".repeat(200)}` },
    }));
    const message = renderTeamsDigest(storm, { label: "teams env:TEAMS_URL", from: DIGEST_WINDOW.from, to: DIGEST_WINDOW.to });
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(TEAMS_MESSAGE_MAX_BYTES);
    expect(JSON.stringify(message)).toContain(`and ${10_000 - TEAMS_DIGEST_GROUPS} more groups with ${10_000 - TEAMS_DIGEST_GROUPS} alerts`);
  });

  it("a digest card", () => {
    const held = heldForDigest();
    const t = heldTimes(held);
    expectGolden("teams/digest.json", json(renderTeamsDigest(held, { label: "teams env:TEAMS_URL", from: DIGEST_WINDOW.from, to: DIGEST_WINDOW.to, heldAt: t.heldAt, sentAt: t.sentAt })));
  });

  it("platform text cannot format, link or call a date function; links are OpenUrl actions of http(s) only", () => {
    expect(escapeCardText("**b** [x](https://evil.example) {{DATE(2017-02-14T06:08:39Z)}} _i_ `c`")).toBe(
      "\\*\\*b\\*\\* \\[x\\](https://evil.example) {\u200B{DATE(2017-02-14T06:08:39Z)}} \\_i\\_ \\`c\\`",
    );
    expect(escapeCardText("- item\n1. first\n# head")).toBe("\\- item\n1\\. first\n\\# head");
    const hostileText = `${HOSTILE} [x](javascript:alert(1)) {{TIME(2017-02-14T06:08:39Z)}}`;
    const card = renderTeamsAlert(hostile(EXAMPLE_DETAILS["Deployment Failed"], hostileText, "javascript:alert(1)"));
    const all = JSON.stringify(card);
    expect(all).not.toMatch(/(?<!\\)\[x\]/);
    expect(all).not.toContain("{{");
    // As text it is escaped; as a link it is left out.
    expect(all).not.toMatch(/"url":"javascript:/);
    for (const a of card.attachments[0]!.content.actions ?? []) expect(a.url).toMatch(/^https?:\/\//);
  });

  it("stays under the size Teams takes", () => {
    const d = { ...EXAMPLE_DETAILS["Deployment Failed"], summary: "w".repeat(50_000), error: { tag: "E", message: "v".repeat(50_000), hint: "u".repeat(50_000) } };
    expect(Buffer.byteLength(JSON.stringify(renderTeamsAlert(d)))).toBeLessThanOrEqual(TEAMS_MESSAGE_MAX_BYTES);
  });
});

describe("the HTTP receivers' sender", () => {
  it("a URL that is not one is a permanent failure that does not show it", async () => {
    const err = await httpSender({ sleep: async () => {} }).post({ service: "PagerDuty", url: "not a url/with-a-key-in-it", body: "{}" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HttpDeliveryError);
    expect((err as HttpDeliveryError).retryable).toBe(false);
    expect((err as Error).message).toContain("PagerDuty URL is not a valid URL");
    expect((err as Error).message).not.toContain("with-a-key-in-it");
  });

  it("an answer that echoes the request's secrets is redacted before it becomes an error's reason", () => {
    const said = answerReason(JSON.stringify({ message: "bad request to https://prod.example/workflows/run?api-version=1&sig=Zk9vQmFyU2VjcmV0U2lnbmF0dXJl" }));
    expect(said).toContain("bad request");
    expect(said).not.toContain("Zk9vQmFyU2VjcmV0U2lnbmF0dXJl");
  });
});
