import { describe, expect, it } from "vitest";
import { channelMessages, type RaisedAlert } from "../../../local/runtime/simulated-day.js";

const a = (id: string, kind: RaisedAlert["kind"], transition: RaisedAlert["transition"], incident_id?: string, repeat = false): RaisedAlert => ({
  id, kind, transition, ...(incident_id ? { incident_id } : {}), ...(repeat ? { incident: { subject: "s", opened_at: "2026-01-01T00:00:00Z", repeat } } : {}),
});

describe("channel messages per incident (the load figures)", () => {
  it("counts a webhook target failing five times then recovering as five channel messages before, two now", () => {
    const alerts = [
      a("w1", "webhook_delivery", "delivery_failed", "w1"),
      ...[2, 3, 4, 5].map((n) => a(`w${n}`, "webhook_delivery", "delivery_failed", "w1", true)),
      a("w6", "webhook_delivery", "target_recovered", "w1"),
    ];
    expect(channelMessages(alerts)).toEqual({ alerts: 6, incidents: 1, before: 5, after: 2, repeats: 4 });
  });

  it("kept deployment follow-ups in threads before; an amendment is an edit, never a message", () => {
    const alerts = [
      a("d1", "deployment", "failed", "d1"),
      a("c1", "deployment", "changes_listed", "d1"),
      a("d2", "deployment", "still_failing", "d1"),
      a("d3", "deployment", "recovered", "d1"),
      a("k1", "cluster_log", "cluster_error", "k1"),
      a("k2", "cluster_log", "cluster_error", "k1"),
      a("k3", "cluster_log", "cluster_recovered", "k1"),
    ];
    expect(channelMessages(alerts)).toMatchObject({ incidents: 2, before: 1 + 2, after: 2 + 2 });
  });
});
