/**
 * The incident fold of webhook targets and clusters (lib/poll/incidents.ts): what each fresh record is
 * in its subject's incident, decided from the stored state and the records alone.
 */
import { describe, expect, it } from "vitest";
import { foldIncident, type IncidentRecord } from "../../../lib/poll/incidents.js";
import { emptyIncidentState, type IncidentState } from "../../../lib/model/transitions.js";

const MIN = 60_000;
const T0 = Date.parse("2026-03-02T10:00:00Z");
const SUBJECT = "cluster:c-1";

const at = (ms: number) => ({ at: { ms, nanos: 0 }, occurredAt: new Date(ms).toISOString() });
const failure = (id: string, ms: number, signature = "502"): IncidentRecord => ({ id, ...at(ms), outcome: "failure", alertId: `alert-${id}`, signature });
const success = (id: string, ms: number): IncidentRecord => ({ id, ...at(ms), outcome: "success", resolvedBy: "step Created" });
const neutral = (id: string, ms: number): IncidentRecord => ({ id, ...at(ms), outcome: "neutral" });

/** The fold's decisions in record order, as `<id> <role> <incident> <failures>[ repeat]`. */
function roles(fold: ReturnType<typeof foldIncident>): string[] {
  return [...fold.decisions].map(([id, d]) => `${id} ${d.role} ${d.incident_id} ${d.incident.failures}${d.incident.repeat ? " repeat" : ""}`);
}

describe("foldIncident", () => {
  it("opens on a failure, joins the next ones (a repeat when status and error are the same), closes on a success", () => {
    const fold = foldIncident(emptyIncidentState(SUBJECT), [
      failure("a", T0), failure("b", T0 + MIN), failure("c", T0 + 2 * MIN, "500"), neutral("n", T0 + 3 * MIN), success("d", T0 + 14 * MIN),
    ]);
    expect(roles(fold)).toEqual(["a opens alert-a 1", "b joins alert-a 2 repeat", "c joins alert-a 3", "d closes alert-a 3"]);
    expect(fold.decisions.get("d")!.incident).toEqual({
      subject: SUBJECT, opened_at: "2026-03-02T10:00:00.000Z", failures: 3, duration_sec: 14 * 60, resolved_by: "step Created",
    });
    expect(fold.changed).toBe(true);
    expect(fold.state.open).toBeUndefined();
    expect(fold.state.watermark).toEqual({ at: { ms: T0 + 14 * MIN, nanos: 0 }, id: "d" });
  });

  it("folds by occurred time then id, whatever the order the records came in", () => {
    const records = [success("z", T0 + 5 * MIN), failure("b", T0), failure("a", T0)];
    expect(roles(foldIncident(emptyIncidentState(SUBJECT), records))).toEqual(["a opens alert-a 1", "b joins alert-a 2 repeat", "z closes alert-a 2"]);
  });

  it("keeps an incident open across polls, and a success with nothing open closes nothing", () => {
    const first = foldIncident(emptyIncidentState(SUBJECT), [success("s", T0 - MIN), failure("a", T0)]);
    expect(roles(first)).toEqual(["a opens alert-a 1"]);
    const stored: IncidentState = { ...first.state, version: 1 };
    const second = foldIncident(stored, [failure("b", T0 + MIN, "503")]);
    expect(roles(second)).toEqual(["b joins alert-a 2"]);
    expect(second.state.open).toMatchObject({ incident_id: "alert-a", failures: 2, last_signature: "503" });
  });

  it("a fold that changes no incident leaves the state as stored: nothing to write", () => {
    const fold = foldIncident(emptyIncidentState(SUBJECT), [success("s", T0), neutral("n", T0 + MIN)]);
    expect(fold).toMatchObject({ changed: false, state: { subject: SUBJECT, version: 0 }, quietCloses: [] });
    expect(fold.state.watermark).toBeUndefined();
  });

  it("closes a cluster's incident after its quiet period: between two records, and at the poll (from when its last failure was seen)", () => {
    const quietMs = 30 * MIN;
    const between = foldIncident(emptyIncidentState(SUBJECT), [failure("a", T0), failure("b", T0 + 45 * MIN)], { quietMs, nowMs: T0 + 45 * MIN });
    expect(roles(between)).toEqual(["a opens alert-a 1", "b opens alert-b 1"]);
    expect(between.quietCloses).toEqual([{
      incident_id: "alert-a", closed_at: "2026-03-02T10:30:00.000Z",
      incident: { subject: SUBJECT, opened_at: "2026-03-02T10:00:00.000Z", failures: 1, duration_sec: 1800, resolved_by: "quiet for 30m" },
    }]);

    const stored: IncidentState = { ...between.state, version: 1 };
    expect(foldIncident(stored, [], { quietMs, nowMs: T0 + 74 * MIN }).quietCloses).toEqual([]);
    const quiet = foldIncident(stored, [], { quietMs, nowMs: T0 + 75 * MIN });
    expect(quiet.quietCloses.map((q) => [q.incident_id, q.closed_at])).toEqual([["alert-b", "2026-03-02T11:15:00.000Z"]]);
    expect(quiet).toMatchObject({ changed: true, state: { version: 1 } });
    expect(quiet.state.open).toBeUndefined();
  });

  it("a platform clock behind Lookout's by more than the quiet period closes nothing at the poll that saw the failure", () => {
    const fold = foldIncident(emptyIncidentState(SUBJECT), [failure("a", T0 - 40 * MIN)], { quietMs: 30 * MIN, nowMs: T0 });
    expect(fold.quietCloses).toEqual([]);
    expect(fold.state.open).toMatchObject({ last_failure_at: "2026-03-02T09:20:00.000Z", last_failure_seen_at: "2026-03-02T10:00:00.000Z" });
  });

  it("an incident all of whose failures are history closes without an alert; one alerted failure makes it news", () => {
    const history = (r: IncidentRecord): IncidentRecord => ({ ...r, history: true });
    const quiet = foldIncident(emptyIncidentState(SUBJECT), [history(failure("a", T0)), success("b", T0 + MIN)]);
    expect(quiet.decisions.get("b")).toMatchObject({ role: "closes", history: true });
    const news = foldIncident(emptyIncidentState(SUBJECT), [history(failure("a", T0)), failure("c", T0 + MIN), success("b", T0 + 2 * MIN)]);
    expect(news.decisions.get("b")!).not.toHaveProperty("history");
  });

  it("a late record before the watermark keeps its alert and joins what is open, uncounted; a late success closes nothing", () => {
    const stored: IncidentState = { ...foldIncident(emptyIncidentState(SUBJECT), [failure("a", T0), failure("b", T0 + 2 * MIN)]).state, version: 1 };
    const fold = foldIncident(stored, [failure("late", T0 + MIN, "500"), success("late-ok", T0 + MIN), failure("c", T0 + 3 * MIN)]);
    expect(roles(fold)).toEqual(["late joins alert-a 2", "c joins alert-a 3 repeat"]);
    expect(fold.state.open).toMatchObject({ failures: 3 });

    const closed: IncidentState = { ...foldIncident(stored, [success("ok", T0 + 5 * MIN)]).state, version: 2 };
    expect(roles(foldIncident(closed, [failure("late", T0 + MIN)]))).toEqual([]);
  });

  it("a re-read after a crash decides the same: from the state before, the same decisions; from the state after, no incident opened twice", () => {
    const records = [failure("a", T0), failure("b", T0 + MIN), success("c", T0 + 2 * MIN), failure("d", T0 + 3 * MIN)];
    const before: IncidentState = { subject: SUBJECT, version: 3 };
    const first = foldIncident(before, records);
    // Crashed before the state was saved: the same records from the same state.
    const again = foldIncident(before, [...records].reverse());
    expect(roles(again)).toEqual(roles(first));
    expect(again.state).toEqual(first.state);
    // Crashed after the state, before the cursor: every record is at or before the watermark.
    const saved: IncidentState = { ...first.state, version: 4 };
    const reread = foldIncident(saved, records);
    expect(reread.changed).toBe(false);
    expect([...reread.decisions.values()].filter((d) => d.role === "opens")).toEqual([]);
  });
});
