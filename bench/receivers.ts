/**
 * What a person sees, at scale: the receivers model (test/support/receivers-model.ts) over 10,000
 * sequences drawn by fast-check — deployments, webhook targets and clusters failing and recovering,
 * first sight, mutes, a second route, receivers answering 429, 5xx and no_service, storms, crashes
 * (SIGKILL), cron runs and the watching loop, the clock moving on — each checked at the Slack receiver
 * (both forms) and the SMTP receiver after every run. Reports the count, what they owed people, and
 * the delay from a failure being read to it being visible. Sequences are independent (their own
 * simulator, receivers and table) and run a few at a time.
 *   RECEIVERS_COUNT (default 10,000), RECEIVERS_CONCURRENCY (default 3), RECEIVERS_SEED,
 *   RECEIVERS_MINUTES: stop drawing new sequences after this long (the figures say how many ran);
 *   RECEIVERS_ONLY=N: that sequence alone (with RECEIVERS_MODEL_DEBUG=1, what each receiver shows when it fails).
 */
import fc from "fast-check";
import pMap from "p-map";
import { dynamoEndpoint, report, section } from "./support.js";
import { DUE_MS, ModelViolation, runSequence, sequenceArbitrary } from "../test/support/receivers-model.js";

const COUNT = Number(process.env.RECEIVERS_COUNT ?? 10_000);
const CONCURRENCY = Number(process.env.RECEIVERS_CONCURRENCY ?? 3);
const SEED = Number(process.env.RECEIVERS_SEED ?? 20261124);
const MINUTES = Number(process.env.RECEIVERS_MINUTES ?? 0);

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

export async function benchReceivers(): Promise<void> {
  section({
    id: "receivers",
    title: `What a person sees: ${COUNT.toLocaleString("en")} model-checked sequences`,
    method:
      "fast-check draws sequences of up to 7 commands (seed " + SEED + "); each runs on its own simulator, Slack receiver (Web API and incoming webhook), " +
      `SMTP receiver and DynamoDB Local table, ${CONCURRENCY} at a time; after every run the receivers are checked against the model: every failure ` +
      `shown where its route says within ${DUE_MS / 1000} s of a run that could read it (and of the receiver answering again), closed incidents resolved where shown, ` +
      "nothing shown twice, nothing held past its bound, no receiver over its budget. Delays are simulated time from the run that read a failure to the first check that saw it",
  });
  const parts = { dynamodbEndpoint: await dynamoEndpoint() };
  const inputs = fc.sample(sequenceArbitrary({ crashes: true, maxCommands: 7 }), { numRuns: COUNT, seed: SEED });
  const started = performance.now();
  const deadline = MINUTES > 0 ? started + MINUTES * 60_000 : Infinity;
  const delays: number[] = [];
  const steady: number[] = [];
  const violations: string[] = [];
  let ran = 0;
  let commands = 0;
  let crashes = 0;
  const only = process.env.RECEIVERS_ONLY === undefined ? undefined : Number(process.env.RECEIVERS_ONLY);
  await pMap(inputs, async (input, i) => {
    if (performance.now() > deadline || (only !== undefined && i !== only)) return;
    try {
      const model = await runSequence(parts, input);
      delays.push(...model.delays);
      steady.push(...model.steadyDelays);
      commands += model.log.filter((l) => !l.startsWith("run @") && !l.startsWith("settle") && !l.startsWith("first sight")).length;
      crashes += model.log.filter((l) => l.startsWith("crash after")).length;
    } catch (err) {
      violations.push(`#${i}: ${(err as Error).message.split("\n").slice(0, 2).join(" / ")}`);
      console.error(`receivers: sequence #${i} ${JSON.stringify({ seed: input.seed, mode: input.mode, old: input.old })}: ${(err as Error).message}`);
      if (!(err instanceof ModelViolation)) console.error(err);
    }
    ran++;
    if (ran % 100 === 0) console.log(`receivers: ${ran} sequences, ${violations.length} violations, ${Math.round((performance.now() - started) / 1000)} s`);
  }, { concurrency: CONCURRENCY });
  const seconds = (performance.now() - started) / 1000;
  delays.sort((a, b) => a - b);
  steady.sort((a, b) => a - b);
  const atOnce = delays.filter((d) => d === 0).length;
  report({ name: "sequences run", value: ran, method: `of ${COUNT.toLocaleString("en")} drawn${ran < COUNT ? ` (stopped after ${MINUTES} min)` : ""}` });
  report({ name: "commands / of them crashes (SIGKILL)", value: `${commands} / ${crashes}`, method: "besides the runs each sequence ends with" });
  report({ name: "violations", value: violations.length, method: violations.slice(0, 3).join("; ") || "none" });
  report({ name: "failures owed (failure × receiver)", value: delays.length, method: "genuine, after first sight, not muted, to a receiver that answers" });
  report({ name: "shown at the run that read them", value: delays.length ? `${((100 * atOnce) / delays.length).toFixed(1)}%` : "-", method: "delay 0" });
  report({ name: "delay from read to visible, steady: p99 / worst", value: `${percentile(steady, 99) / 1000} / ${(steady.at(-1) ?? 0) / 1000}`, unit: "s", method: `simulated time, ${steady.length} failure × receiver with no fault of the receiver nor crash since the read and runs at most 90 s apart; what is not at once waited for a digest; the stated bound: the first run ${DUE_MS / 1000} s after one that could read it` });
  report({ name: "delay from read to visible, all: p99 / worst", value: `${percentile(delays, 99) / 1000} / ${(delays.at(-1) ?? 0) / 1000}`, unit: "s", method: "simulated time; with a receiver failing or a run killed, until the next run after it answers again (runs are up to two hours apart)" });
  report({ name: "wall time", value: Math.round(seconds), unit: "s", method: `${(seconds / Math.max(1, ran)).toFixed(2)} s a sequence, ${CONCURRENCY} at a time` });
  if (violations.length) process.exitCode = 1;
}
