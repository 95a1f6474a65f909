/**
 * What a person sees, proven at the receivers (docs/events.md, "Incidents"; docs/status.md): a
 * model-based test of the whole pipeline on the real parts — the simulator, a DynamoDB Local database per sequence,
 * the Slack test receiver in both forms and the SMTP receiver — in cron runs and in the watching loop.
 * The model and its checks are in test/support/receivers-model.ts; `npm run bench -- receivers` draws
 * 10,000 sequences. What it found is kept below as examples.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { leaseDatabase } from "../../support/dynamodb.js";
import { commands as c, runSequence, sequenceArbitrary, type Parts } from "../../support/receivers-model.js";

// 6 sequences here, two at a time (each pair about 5 s of CPU on two cores; 12 took half the file): the
// examples below keep what the draws found and between them use every command, in both modes, and the
// bench's receivers section draws 10,000 (RECEIVERS_MODEL_RUNS sets more here; docs/testing.md).
const RUNS = Number(process.env.RECEIVERS_MODEL_RUNS ?? 6);
const MIN = 60_000;

/** Each sequence on a database of its own: DynamoDB Local slows with every table a database had (test/support/dynamodb-pool.ts). */
const parts = async (): Promise<Parts> => ({ dynamodbEndpoint: await leaseDatabase() });

describe("what each receiver shows, against a model", () => {
  it(`${RUNS} sequences: every failure shown where its route says, resolved where shown, never twice, within the rate`, { timeout: 900_000 }, async () => {
    let owed = 0;
    // Two draws side by side (each sequence has its own simulator, receivers and table): while one
    // waits on DynamoDB Local, the other runs. Fixed seeds: CI is reproducible; the bench draws 10,000
    // others (RECEIVERS_MODEL_SEED picks others here).
    const seed = Number(process.env.RECEIVERS_MODEL_SEED ?? 2111);
    await Promise.all([0, 1].map((k) =>
      fc.assert(
        fc.asyncProperty(sequenceArbitrary({ crashes: true, maxCommands: 5 }), async (input) => {
          const model = await runSequence(await parts(), input);
          owed += model.delays.length;
        }),
        { numRuns: Math.ceil(RUNS / 2), endOnFailure: true, seed: seed + k },
      ),
    ));
    expect(owed).toBeGreaterThan(RUNS); // the sequences owed people failures, and they were shown
  });

  describe.concurrent("examples", () => {
    // Two at a time, as the draws run: while one waits on DynamoDB Local, the other runs.
    const slot = twoAtATime();
    /** Holds the model's checks after every run; `owed`: people were owed failures, and shown them. */
    const example = (name: string, input: Parameters<typeof runSequence>[1], owed = true) =>
      it(name, { timeout: 240_000 }, async ({ expect }) => {
        const model = await slot(async () => runSequence(await parts(), input));
        expect(model.delays.length > 0).toBe(owed);
      });

    // The day Lookout was first deployed: a service already failing at first sight, then failing again.
    for (const mode of ["cron", "loop"] as const) {
      example(`first sight of a failing service, then a new failure, runs a minute apart (${mode})`, {
        seed: 1, mode, old: [0], commands: [c.deploy(0, "DEPLOYMENT_ERROR"), c.run(MIN), c.deploy(0, "DEPLOYED"), c.run(MIN)],
      });
    }
    example("first sight of a failing service, then a new failure, runs seconds apart", {
      seed: 2, mode: "cron", old: [0], commands: [c.deploy(0, "DEPLOYMENT_ERROR"), c.run(5_000), c.deploy(0, "DEPLOYMENT_ERROR"), c.run(5_000)],
    });
    // Found: in a storm, every amendment of an alert held for the digest waited its ten seconds for a
    // message that could never come (the run took a minute); now it goes at once.
    example("a storm past the budget, then more failures of services held in its digest", {
      seed: 5, mode: "cron", old: [3], commands: [c.storm(), c.run(MIN), c.deploy(3, "DEPLOYMENT_ERROR"), c.deploy(0, "DEPLOYMENT_ERROR")],
    });
    // Found (by the model's first draft): a clean step listed before errors were read replaces them.
    example("errors replaced by a clean step before they were read, a webhook target failing meanwhile", {
      seed: 6, mode: "loop", old: [], commands: [c.webhookTarget(false), c.deploy(2, "BUILD_ERROR"), c.clusterErrors(2), c.clusterClean(), c.addRoute(), c.deploy(1, "DEPLOYMENT_ERROR"), c.run(MIN)],
    });
    example("a run killed after its opening was claimed: the next run tells it, once", {
      seed: 7, mode: "loop", old: [], commands: [c.clusterErrors(3), c.deploy(0, "DEPLOYMENT_ERROR"), c.crash(43), c.deploy(0, "DEPLOYMENT_ERROR"), c.run(MIN)],
    });
    // Found: a failed webhook delivery names the deployment's service, so muting it mutes the delivery too.
    example("a webhook target failing on the deployments of a service muted before they were read", {
      seed: 944885, mode: "cron", old: [0, 3], commands: [c.webhookTarget(false), c.deploy(2, "CANCELED"), c.mute(2, 2 * 60 * MIN), c.deploy(1, "DEPLOYED"), c.run(MIN)],
    }, false);
    // Found: PagerDuty was sent a close whose opening a storm held (a resolve of nothing), then the
    // opening in the digest, which stayed open; a close now waits behind its incident's held alerts there.
    example("a storm, a service recovering in the same run, another storm", {
      seed: 755393, mode: "cron", old: [], commands: [c.storm(), c.deploy(2, "DEPLOYED"), c.run(6 * MIN), c.hookGone(), c.storm()],
    });
    example("a receiver answering 429, then 5xx, then gone; a mute that expires", {
      seed: 8, mode: "cron", old: [1], commands: [
        c.fault("api", "429"), c.deploy(1, "DEPLOYMENT_ERROR"), c.run(MIN), c.fault("mail", "5xx"), c.mute(2, 10 * MIN), c.deploy(2, "BUILD_ERROR"),
        c.run(6 * MIN), c.hookGone(), c.deploy(2, "BUILD_ERROR"), c.run(6 * MIN), c.deploy(1, "DEPLOYED"), c.run(2 * 60 * MIN),
      ],
    });
  });
});

/** Runs what it is given at most two at a time, in the order given. */
function twoAtATime() {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (running >= 2) await new Promise<void>((go) => waiting.push(go));
    else running++;
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
