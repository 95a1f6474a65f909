/**
 * A gentle demo for `lookout simulate` and `npm start`: the simulated clock follows wall time (or runs
 * faster), and every ~20 s a random application is deployed (about one in four fails); now and then a
 * cluster run logs an error. With `story`, the first minutes also tell one incident of each kind from
 * open to resolved: a service that fails, fails again and recovers; a webhook target that answers 503
 * for a while, then 200; a cluster run that ends in errors, then one that succeeds.
 */
import { Rng } from "./ids.js";
import type { Simulator } from "./index.js";

export interface DemoOptions {
  /** Wall-clock ms between ticks (default 1000). */
  tickMs?: number;
  /** Mean simulated ms between deployments (default 20 000). */
  everyMs?: number;
  /** Simulated ms per wall-clock ms (default 1: the simulated clock follows wall time). */
  speed?: number;
  onEvent?: (line: string) => void;
  /** Play the scripted incidents (see above) in the first simulated minutes. */
  story?: boolean;
}

interface StoryStep {
  /** Simulated ms after the start. */
  atMs: number;
  run(sim: Simulator): string | undefined;
}

const MINUTE = 60_000;

/** One incident of each kind, from open to resolved, in about seven simulated minutes. */
const STORY: StoryStep[] = [
  { atMs: 0, run: (sim) => webhookTarget(sim, 503) },
  { atMs: 0.5 * MINUTE, run: (sim) => deployFirst(sim, "DEPLOYMENT_ERROR") },
  { atMs: 1 * MINUTE, run: (sim) => clusterRun(sim, 2) },
  { atMs: 2.5 * MINUTE, run: (sim) => deployFirst(sim, "BUILD_ERROR") },
  { atMs: 4 * MINUTE, run: (sim) => webhookTarget(sim, 200) },
  { atMs: 5 * MINUTE, run: (sim) => deployFirst(sim, "DEPLOYED") },
  { atMs: 6 * MINUTE, run: (sim) => clusterRun(sim, 0) },
];

function webhookTarget(sim: Simulator, status: number): string | undefined {
  const id = sim.ids.webhookIds[0];
  if (!id) return undefined;
  sim.scenario.setWebhookTarget(id, { status });
  return `webhook ${id}: its target now answers HTTP ${status}`;
}

function deployFirst(sim: Simulator, outcome: string): string | undefined {
  const appId = sim.ids.applicationIds[0];
  if (!appId) return undefined;
  const executionId = sim.scenario.deploy(appId, { outcome, origin: "GIT" });
  return `deployment ${executionId} of ${sim.model.services.get(appId)?.name ?? appId} started (it will end ${outcome})`;
}

function clusterRun(sim: Simulator, errors: number): string | undefined {
  const id = sim.ids.clusterIds[0];
  if (!id) return undefined;
  sim.scenario.clusterRun(id, { entries: 12, errors });
  return `cluster ${id} logged a run${errors ? ` ending in ${errors} errors` : " that succeeded"}`;
}

/** Starts the demo; returns a function that stops it. */
export function startDemo(sim: Simulator, opts: DemoOptions = {}): () => void {
  const tickMs = opts.tickMs ?? 1000;
  const everyMs = opts.everyMs ?? 20_000;
  const step = tickMs * (opts.speed ?? 1);
  const rng = new Rng(`demo:${sim.ids.organizationId}`);
  let untilNext = everyMs;
  let elapsed = 0;
  const story = opts.story ? [...STORY] : [];
  const timer = setInterval(() => {
    while (story.length && story[0]!.atMs <= elapsed) {
      const line = story.shift()!.run(sim);
      if (line) opts.onEvent?.(line);
    }
    sim.clock.advance(step);
    elapsed += step;
    untilNext -= step;
    if (untilNext > 0 || sim.ids.applicationIds.length === 0) return;
    untilNext = rng.int(Math.round(everyMs * 0.5), Math.round(everyMs * 1.5));
    // The story's service is left to the story while it plays.
    const pool = story.length && sim.ids.applicationIds.length > 1 ? sim.ids.applicationIds.slice(1) : sim.ids.applicationIds;
    const appId = rng.pick(pool);
    const outcome = rng.pick(["DEPLOYED", "DEPLOYED", "DEPLOYED", "DEPLOYMENT_ERROR", "DEPLOYED", "BUILD_ERROR", "DEPLOYED", "CANCELED"]);
    const executionId = sim.scenario.deploy(appId, { outcome, origin: rng.pick(["GIT", "CONSOLE", "API", "CLI"]) });
    opts.onEvent?.(`deployment ${executionId} of ${sim.model.services.get(appId)?.name ?? appId} started`);
    const clusterId = sim.ids.clusterIds[0];
    if (clusterId && !story.length && rng.chance(0.2)) {
      sim.scenario.clusterRun(clusterId, { entries: rng.int(10, 30), errors: rng.int(0, 2) });
      opts.onEvent?.(`cluster ${clusterId} logged a new run`);
    }
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
