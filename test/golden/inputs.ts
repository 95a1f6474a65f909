/**
 * Inputs of the notify rendering tests: the follow-up and digest cases of the golden files, and hostile
 * details whose every platform string is attacker-chosen (escaping tests, property tests).
 */
import type { LookoutEventDetail } from "../../lib/model/event.js";
import { EXAMPLE_DETAILS } from "../fixtures/event-examples.js";

export const FIRST = EXAMPLE_DETAILS["Deployment Failed"];
export const STILL = EXAMPLE_DETAILS["Deployment Still Failing"];
export const RECOVERED = EXAMPLE_DETAILS["Deployment Recovered"];

/** What a storm held back: 9 failures of api, 3 deliveries, 2 of another service, 1 cluster error. */
export function heldForDigest(): LookoutEventDetail[] {
  const held: LookoutEventDetail[] = [];
  const at = (min: number) => new Date(Date.UTC(2026, 2, 2, 14, min, 0)).toISOString().replace(".000Z", "Z");
  for (let i = 0; i < 9; i++) {
    held.push({ ...STILL, id: `still-${i}`, occurred_at: at(10 + i), summary: `api (storefront/production) deployment still failing — DEPLOYMENT_ERROR — ${i + 2} failures in a row`, deployment: { ...STILL.deployment!, failure_count: i + 2 } });
  }
  const hook = EXAMPLE_DETAILS["Webhook Delivery Failed"];
  for (let i = 0; i < 3; i++) held.push({ ...hook, id: `hook-${i}`, occurred_at: at(20 + i) });
  const worker = { id: "8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d", name: "worker" };
  for (let i = 0; i < 2; i++) {
    held.push({ ...FIRST, id: `worker-${i}`, service: worker, occurred_at: at(30 + i), summary: `worker (storefront/production) deployment failed — BUILD_ERROR (#${i + 1})` });
  }
  held.push(EXAMPLE_DETAILS["Cluster Error"]);
  return held;
}

export const DIGEST_WINDOW = { from: "2026-03-02T14:10:00Z", to: "2026-03-02T14:40:00Z" };

/** When each held alert was held (30 s after it occurred) and when the digest went out: the held durations. */
export function heldTimes(held: readonly LookoutEventDetail[]): { heldAt: Record<string, string>; sentAt: string } {
  const heldAt = Object.fromEntries(held.map((d) => [d.id, new Date(Date.parse(d.occurred_at) + 30_000).toISOString()]));
  return { heldAt, sentAt: "2026-03-02T14:41:00Z" };
}

export const HOSTILE = "<!channel> *deploy* <https://evil.example|click> & friends _it_ ~gone~ `code` <@U123> &amp; \"q\" 'a'";

/** A detail of the given kind with `text` in every free-text and name field, and hostile links. */
export function hostile(base: LookoutEventDetail, text: string, link = `https://ok.example/x?a=1&b=${text}`): LookoutEventDetail {
  const ref = (id: string) => ({ id: `${id}${text}`, name: text, type: text });
  return {
    ...base,
    id: base.id,
    organization: { id: `org${text}`, name: text },
    project: ref("p"),
    environment: ref("e"),
    service: ref("s"),
    cluster: ref("c"),
    webhook: ref("w"),
    status: text,
    summary: text,
    deployment: {
      execution_id: text,
      commit: { id: text, short_id: text, message: `${text}\n\nbody ${text}`, author: text, link, tag: text },
      triggered_by: text,
      origin: text,
      duration: text,
      failure_count: 2,
      previous_status: text,
    },
    error: { tag: text, message: text, hint: text, link: "javascript:alert(1)", step: text },
    http: { status_code: null, target_host: text, matched_event: text, delivery_kind: text, response_excerpt: text },
    health: { check: "token_rejected", subject: text, detail: text, consecutive_failures: 3 },
    link,
    incident_id: `inc${text}`,
  };
}
