import { describe, expect, it } from "vitest";
import { normalizeClusterLog, normalizeDeployment, normalizeWebhookDelivery } from "../../../lib/poll/normalize.js";
import { durationSeconds } from "../../../lib/model/time.js";

const org = "o1";

describe("normalizers", () => {
  it("reads a failed webhook delivery, redacted, with the services it names", () => {
    const r = normalizeWebhookDelivery(
      {
        id: "d1", created_at: "2026-01-01T00:00:00Z", kind: "STANDARD", matched_event: "DEPLOYMENT_FAILURE",
        target_url_used: "https://u:p@hooks.example.com/in?token=t", target_response_status_code: 502,
        target_response_body: "bad gateway",
        request: {
          headers: { "X-Signature": "s" },
          payload: { project: { id: "p1", name: "shop" }, environment: { id: "e1", name: "prod", type: "PRODUCTION" }, applications: [{ id: "a1", name: "api" }] },
        },
      },
      { kind: "webhook", organizationId: org, id: "w1" },
    );
    expect(r).toMatchObject({ failed: true, status_code: 502, target_host: "hooks.example.com", matched_event: "DEPLOYMENT_FAILURE" });
    expect(r.target_url).not.toContain("u:p");
    expect(JSON.stringify(r.request)).not.toContain('"s"');
    expect(r.services).toEqual([
      { id: "a1", name: "api", type: "APPLICATION", project: { id: "p1", name: "shop" }, environment: { id: "e1", name: "prod", type: "PRODUCTION" } },
    ]);
  });

  it("counts a delivery with no status code as failed", () => {
    const r = normalizeWebhookDelivery({ id: "d2", target_response_status_code: null }, { kind: "webhook", organizationId: org, id: "w" });
    expect(r.failed).toBe(true);
    expect(r.status_code).toBeNull();
  });

  it("hashes cluster log entries by content and accepts underlying_error in either place", () => {
    const src = { kind: "cluster" as const, organizationId: org, id: "c1" };
    const entry = {
      type: "error", timestamp: "2026-01-01T00:00:00.123456789Z", step: "UpgradeError",
      error: { tag: "CANNOT_UNINSTALL_HELM_CHART", user_log_message: "boom", event_details: { underlying_error: { message: "deep" } } },
    };
    const a = normalizeClusterLog(entry, src);
    expect(a).toMatchObject({ failed: true, error: { tag: "CANNOT_UNINSTALL_HELM_CHART", underlying: "deep" } });
    expect(normalizeClusterLog({ ...entry }, src).id).toBe(a.id);
    expect(normalizeClusterLog({ ...entry, timestamp: "2026-01-01T00:00:00.123456788Z" }, src).id).not.toBe(a.id);
    expect(normalizeClusterLog({ type: "info", step: "CreateError" }, src).failed).toBe(true);
    expect(normalizeClusterLog({ type: "info", step: "Created" }, src).failed).toBe(false);
  });

  it("reads a deployment entry, deriving an execution id for old entries", () => {
    const src = { kind: "deployment" as const, organizationId: org, id: "a1" };
    const d = normalizeDeployment(
      {
        identifier: { service_id: "a1", name: "api", service_type: "APPLICATION", execution_id: "x-1" },
        status: "DEPLOYMENT_ERROR",
        auditing_data: { created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:05:00Z", triggered_by: "jane@example.com", origin: "GIT" },
        details: { commit: { git_commit_id: "abcdef1234567", message: "fix", author_name: "Jane", commit_page_url: "https://git/x" } },
        total_duration: "PT5M",
      },
      src,
    );
    expect(d).toMatchObject({ execution_id: "x-1", status: "DEPLOYMENT_ERROR", triggered_by: "jane@example.com", commit: { id: "abcdef1234567", author: "Jane" } });
    const old = normalizeDeployment({ identifier: { service_id: "a1" }, status: "DEPLOYED", details: { commit: null } }, src);
    expect(old.execution_id_derived).toBe(true);
    expect(old.execution_id).toMatch(/^derived-/);
  });

  it("stores a deployment's times as UTC instants, keeping the platform's text when it differs", () => {
    const src = { kind: "deployment" as const, organizationId: org, id: "a1" };
    const seen = "2026-03-02T14:00:00.000Z";
    const at = (created_at: string, updated_at?: string) =>
      normalizeDeployment({ identifier: { service_id: "a1", execution_id: "x" }, status: "DEPLOYED", auditing_data: { created_at, updated_at } }, src, seen);
    expect(at("2026-03-02T13:00:00Z")).toMatchObject({ created_at: "2026-03-02T13:00:00.000Z" });
    expect(at("2026-03-02T13:00:00Z").created_at_raw).toBeUndefined();
    expect(at("2026-03-02T15:00:00+02:00", "2026-03-02T13:05:00")).toMatchObject({
      created_at: "2026-03-02T13:00:00.000Z", created_at_raw: "2026-03-02T15:00:00+02:00",
      updated_at: "2026-03-02T13:05:00.000Z", updated_at_raw: "2026-03-02T13:05:00",
    });
    expect(at("2026-03-02T13:00:00.123456789Z")).toMatchObject({ created_at: "2026-03-02T13:00:00.123Z", created_at_raw: "2026-03-02T13:00:00.123456789Z" });
    // Implausible or unreadable: no instant, the text kept; the execution id does not depend on it.
    const odd = at("9999-01-01T00:00:00Z");
    expect(odd.created_at).toBeUndefined();
    expect(odd.created_at_raw).toBe("9999-01-01T00:00:00Z");
    expect(at("last tuesday")).toMatchObject({ created_at_raw: "last tuesday" });
    const huge = at(`2026-03-02T13:00:00Z${"x".repeat(300_000)}`);
    expect(huge.created_at).toBeUndefined();
    expect(huge.created_at_raw!.length).toBeLessThanOrEqual(101);
  });

  it("reads ISO 8601 durations", () => {
    expect(durationSeconds("PT8M42S")).toBe(522);
    expect(durationSeconds("P1DT1H")).toBe(90000);
    expect(durationSeconds("8 minutes")).toBeUndefined();
  });
});

describe("stored payload size", () => {
  it("clips a webhook payload too large to store, keeping an excerpt", () => {
    const r = normalizeWebhookDelivery(
      { id: "big", target_response_status_code: 500, request: { payload: { logs: ["x".repeat(200_000)] } } },
      { kind: "webhook", organizationId: "o", id: "w" },
    );
    expect(r.request).toMatchObject({ _clipped: true });
    expect(JSON.stringify(r).length).toBeLessThan(10_000);
  });
});
