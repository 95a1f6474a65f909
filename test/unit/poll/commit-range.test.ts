/** "What changed": the commit range between the last success and a failure (lib/poll/commit-range.ts), and its amendment (lib/alerts/changes-listed.ts). */
import { describe, expect, it } from "vitest";
import { CHANGE_NOTES, CHANGES_SHOWN, COMMITS_LISTED, commitRange, sameCommit } from "../../../lib/poll/commit-range.js";
import { changesAlertId, changesDetail } from "../../../lib/alerts/changes-listed.js";
import { withPlatformNames } from "../../../lib/alerts/event-names.js";
import { decideDeploymentTransition } from "../../../lib/poll/transitions.js";
import { emptyServiceState } from "../../../lib/model/transitions.js";
import type { CommitRecord, DeploymentObservation } from "../../../lib/model/observations.js";
import type { LookoutEventDetail } from "../../../lib/model/event.js";

const sha = (n: number) => n.toString(16).padStart(40, "a");
/** `n` commits, newest first: c(n-1) … c(0). */
const history = (n: number): CommitRecord[] => Array.from({ length: n }, (_, i) => ({ id: sha(n - 1 - i), message: `change ${n - 1 - i}` }));
const ids = (cs: CommitRecord[]) => cs.map((c) => c.id);

describe("commitRange", () => {
  it("lists the commits after the last success up to the failing one, newest first, at most five shown", () => {
    const listed = history(20);
    const r = commitRange(listed, sha(3), sha(12));
    expect(r.total).toBe(9);
    expect(ids(r.commits)).toEqual([sha(12), sha(11), sha(10), sha(9), sha(8)]);
    expect(r).toMatchObject({ since: sha(3), until: sha(12), more: false });
    expect(r.note).toBeUndefined();
    expect(commitRange(listed, sha(11), sha(12))).toMatchObject({ total: 1, commits: [{ id: sha(12) }] });
  });

  it("runs past the list when the last success's commit is not among the 100 listed: `more`, total a lower bound", () => {
    const listed = history(COMMITS_LISTED + 50).slice(0, COMMITS_LISTED); // the newest 100
    const r = commitRange(listed, sha(3), sha(140));
    expect(r).toMatchObject({ total: 91, more: true });
    expect(r.commits).toHaveLength(CHANGES_SHOWN);
    expect(r.note).toBeUndefined();
    // In a shorter list the commit is gone, not further back: said so.
    expect(commitRange(history(10), "f".repeat(40), sha(5))).toMatchObject({ total: 6, more: true, note: CHANGE_NOTES.sinceNotListed });
  });

  it("lists nothing, and says why, with no earlier success, the same commit, a rollback or a failing commit not listed", () => {
    const listed = history(10);
    expect(commitRange(listed, undefined, sha(5))).toEqual({ until: sha(5), commits: [], total: 0, more: false, note: CHANGE_NOTES.noEarlierSuccess });
    expect(commitRange(listed, sha(5), sha(5))).toMatchObject({ total: 0, note: CHANGE_NOTES.sameCommit });
    expect(commitRange(listed, sha(5).toUpperCase().slice(0, 7), sha(5))).toMatchObject({ total: 0, note: CHANGE_NOTES.sameCommit });
    expect(commitRange(listed, sha(7), sha(5))).toMatchObject({ total: 0, note: CHANGE_NOTES.rollback });
    expect(commitRange(listed, sha(1), "e".repeat(40))).toMatchObject({ total: 0, note: CHANGE_NOTES.untilNotListed });
  });

  it("compares ids whole or by an abbreviation of 7 characters or more", () => {
    expect(sameCommit("abcdef0123", "ABCDEF0")).toBe(true);
    expect(sameCommit("abcdef0123", "abcdef")).toBe(false);
    expect(sameCommit(undefined, "abc")).toBe(false);
  });
});

describe("the changes_listed amendment", () => {
  const failure = {
    version: 1, id: "f1", kind: "deployment", transition: "failed", severity: "critical",
    organization: { id: "o" }, project: { id: "p", name: "shop" }, service: { id: "s", name: "billing", type: "APPLICATION" },
    status: "DEPLOYMENT_ERROR", occurred_at: "2026-03-02T10:00:00.000Z", observed_at: "2026-03-02T10:00:01.000Z", summary: "billing failed",
    record: { type: "deployment_execution", id: "x1" }, deployment: { execution_id: "x1", commit: { id: sha(12) } }, incident_id: "f1",
  } satisfies LookoutEventDetail;

  it("amends the failure: its refs, severity and incident, a stable id, the change facts", () => {
    const d = changesDetail(failure, commitRange(history(20), sha(3), sha(12)), "2026-03-02T10:00:02.000Z");
    expect(d).toMatchObject({
      id: changesAlertId("f1"), transition: "changes_listed", kind: "deployment", severity: "critical", amends: "f1", incident_id: "f1",
      project: failure.project, service: failure.service, record: failure.record,
      deployment: { execution_id: "x1", changes: { since_commit: sha(3), until_commit: sha(12), total: 9 } },
    });
    expect(d.deployment!.changes!.commits[0]).toEqual({ id: sha(12), short_id: sha(12).slice(0, 7), message: "change 12" });
    expect(d.deployment!.changes!.more).toBeUndefined();
    expect(d.summary).toContain("9 commits since the last successful deployment");
    expect(changesDetail(failure, commitRange([], undefined, sha(12)), "2026-03-02T10:00:02.000Z").summary).toContain(CHANGE_NOTES.noEarlierSuccess);
  });

  it("names the project and the member who triggered it, from the cached names, when the event lacks them", () => {
    const names = {
      organization_id: "o", refresh_after: "", projects: [{ id: "p2", name: "back office" }],
      members: [{ id: "u1", name: "Ada Lovelace", email: "ada@example.test" }],
    };
    const byEmail = withPlatformNames({ ...failure, project: { id: "p2" }, deployment: { execution_id: "x", triggered_by: "ADA@example.test" } }, names);
    expect(byEmail.project).toEqual({ id: "p2", name: "back office" });
    expect(byEmail.deployment?.triggered_by_name).toBe("Ada Lovelace");
    expect(withPlatformNames({ ...failure, deployment: { execution_id: "x", triggered_by: "u1" } }, names).deployment?.triggered_by_name).toBe("Ada Lovelace");
    expect(withPlatformNames({ ...failure, deployment: { execution_id: "x", triggered_by: "ops-bot" } }, names)).toEqual({ ...failure, deployment: { execution_id: "x", triggered_by: "ops-bot" } });
  });
});

describe("the last successful deployment's commit", () => {
  const obs = (status: string, commit?: string, created = "2026-03-02T10:00:00Z"): DeploymentObservation => ({
    record_kind: "deployment", organization_id: "o", application_id: "a", service_id: "a", execution_id: `x-${status}-${commit}`,
    execution_id_derived: false, status, created_at: created, ...(commit ? { commit: { id: commit } } : {}),
  });

  it("is kept on every success, a recovery included, and not by a failure or a success without a commit", () => {
    const ok = decideDeploymentTransition(undefined, obs("DEPLOYED", "c1"), emptyServiceState(), "id");
    expect(ok.transition).toBeUndefined();
    expect(ok).toMatchObject({ changed: true, service: { last_success_commit: "c1", failing: false } });
    const failed = decideDeploymentTransition(undefined, obs("BUILD_ERROR", "c2"), ok.service, "f");
    expect(failed.service.last_success_commit).toBe("c1");
    const recovered = decideDeploymentTransition(undefined, obs("DEPLOYED", "c3"), failed.service, "r");
    expect(recovered).toMatchObject({ transition: "recovered", service: { last_success_commit: "c3", failing: false } });
    const svc = recovered.service;
    expect(decideDeploymentTransition(undefined, obs("DEPLOYED"), svc, "n").service).toBe(svc);
    expect(decideDeploymentTransition(undefined, obs("DEPLOYED", "c3"), svc, "n").service).toBe(svc); // the same: nothing to write
  });
});
