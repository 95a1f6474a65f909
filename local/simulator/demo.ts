/**
 * A gentle demo for `lookout simulate`: the simulated clock follows wall time, and every ~20 s a random
 * application is deployed (about one in four fails); now and then a cluster run logs an error.
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
}

/** Starts the demo; returns a function that stops it. */
export function startDemo(sim: Simulator, opts: DemoOptions = {}): () => void {
  const tickMs = opts.tickMs ?? 1000;
  const everyMs = opts.everyMs ?? 20_000;
  const step = tickMs * (opts.speed ?? 1);
  const rng = new Rng(`demo:${sim.ids.organizationId}`);
  let untilNext = everyMs;
  const timer = setInterval(() => {
    sim.clock.advance(step);
    untilNext -= step;
    if (untilNext > 0 || sim.ids.applicationIds.length === 0) return;
    untilNext = rng.int(Math.round(everyMs * 0.5), Math.round(everyMs * 1.5));
    const appId = rng.pick(sim.ids.applicationIds);
    const outcome = rng.pick(["DEPLOYED", "DEPLOYED", "DEPLOYED", "DEPLOYMENT_ERROR", "DEPLOYED", "BUILD_ERROR", "DEPLOYED", "CANCELED"]);
    const executionId = sim.scenario.deploy(appId, { outcome, origin: rng.pick(["GIT", "CONSOLE", "API", "CLI"]) });
    opts.onEvent?.(`deployment ${executionId} of ${sim.model.services.get(appId)?.name ?? appId} started`);
    const clusterId = sim.ids.clusterIds[0];
    if (clusterId && rng.chance(0.2)) {
      sim.scenario.clusterRun(clusterId, { entries: rng.int(10, 30), errors: rng.int(0, 2) });
      opts.onEvent?.(`cluster ${clusterId} logged a new run`);
    }
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
