/**
 * A simulated day at 500 applications, 50 clusters and 20 webhooks (local/runtime/simulated-day.ts). Its
 * invariants fail the bench loudly; the suite runs a three-hour, 20-application version of it.
 */
import { dayProblems, describeDay, simulateDay } from "../local/runtime/simulated-day.js";
import { dayProgress, firstSightProgress, dynamo, report, section } from "./support.js";

export async function benchLoad(): Promise<void> {
  section({
    id: "load",
    title: "Load: a simulated day at 500 applications, 50 clusters, 20 webhooks",
    method:
      "The simulator schedules 24 hours of random activity (40 deployments and 6 cluster runs an hour, 10% of deployments fail, " +
      "30% of cluster runs log errors; a fifth of the webhooks' targets answer 503 for an hour) after first sight of every source; dispatch and the real poller run tick by tick on the " +
      "simulator's clock at 1000 requests/hour, against DynamoDB Local. Fails if a failure is missed, the budget is exceeded in any " +
      "hour, a poll fails, a source counts as stalled, or writes exceed three per new record.",
  });
  const t = await dynamo();
  const started = performance.now();
  const r = await simulateDay({
    size: { applications: 500, clusters: 50, webhooks: 20 }, hours: 24, deploymentsPerHour: 40, clusterRunsPerHour: 6,
    store: { ...t, retentionMs: 100 * 365 * 86_400_000 }, onHour: dayProgress("load"), onFirstSight: firstSightProgress("load"),
  });
  const method = "one simulated day (bench/load.ts)";
  report({ name: "deployments / of which failed", value: `${r.deployments} / ${r.failures}`, method });
  report({ name: "failures missed", value: r.missed.length, method });
  report({ name: "cluster runs / cluster errors alerted", value: `${r.clusterRuns} / ${r.clusterErrorsAlerted}`, method });
  report({ name: "polls / requests", value: `${r.polls} / ${r.requests}`, method });
  report({ name: "most requests in any hour (budget 1000)", value: r.maxRequestsInAnHour, method });
  report({ name: "new records / DynamoDB writes", value: `${r.newRecords} / ${r.writes}`, method });
  report({ name: "the longest a cluster went unpolled", value: r.longestClusterGapMin.toFixed(0), unit: "min", method: `${method}; a cluster's log list holds its latest run only (docs/platform.md)` });
  report({ name: "polls deferred (answer read at a later tick) / failed", value: `${r.deferredPolls} / ${r.failedPolls}`, method });
  report({ name: "sources polling_stalled would be raised for", value: r.stalledSources.length, method: `${method}; dispatch's health facts at each tick of the span, default allowances (docs/status.md)` });
  const m = r.messages;
  report({ name: "alerts / incidents (after first sight)", value: `${m.alerts} / ${m.incidents}`, method });
  report({ name: "Slack channel messages before incidents of every kind", value: m.before, method: `${(m.before / Math.max(1, m.incidents)).toFixed(2)} per incident; deployment follow-ups in threads only` });
  report({ name: "Slack channel messages now", value: m.after, method: `${(m.after / Math.max(1, m.incidents)).toFixed(2)} per incident: the first message and its broadcast resolution; ${m.repeats} repeats counted in threads` });
  report({ name: "wall time", value: (performance.now() - started) / 1000, unit: "s", method: "on this machine" });
  const problems = dayProblems(r);
  if (problems.length) throw new Error(`load invariants broken: ${problems.join("; ")} (${describeDay(r)})`);
}
