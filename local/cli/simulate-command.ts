/**
 * `lookout simulate`: runs the simulator until SIGINT/SIGTERM, printing how to reach it. With --json,
 * stdout carries exactly one JSON object (activity lines go to stderr).
 */
import { startDemo } from "../simulator/demo.js";
import { startSimulator, type Simulator } from "../simulator/index.js";

export interface SimulateCommandOptions {
  port: number;
  host: string;
  json: boolean;
}

function describe(sim: Simulator) {
  const name = (id: string) => sim.model.services.get(id)?.name ?? id;
  return {
    url: sim.url,
    apiToken: sim.apiToken,
    organizationId: sim.ids.organizationId,
    projectId: sim.ids.projectId,
    environmentId: sim.ids.environmentId,
    webhookIds: sim.ids.webhookIds,
    clusterIds: sim.ids.clusterIds,
    applications: sim.ids.applicationIds.map((id) => ({ id, name: name(id) })),
  };
}

export async function simulateCommand(opts: SimulateCommandOptions): Promise<number> {
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    console.error(`lookout simulate: --port must be a whole number from 0 to 65535, got ${String(opts.port)}`);
    return 1;
  }
  let sim: Simulator;
  try {
    // Its clock starts now, as Lookout's does: a platform a year behind would make every failure old news
    // (backfill, not alerted) to a `lookout run` watching it.
    sim = await startSimulator({ port: opts.port, host: opts.host, startTime: new Date().toISOString() });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") console.error(`lookout simulate: port ${opts.port} is already in use; choose another with --port <n> (0 picks a free one)`);
    else if (code === "EACCES") console.error(`lookout simulate: not allowed to listen on ${opts.host}:${opts.port}; choose another with --port <n>`);
    else console.error(`lookout simulate: cannot start the simulator on ${opts.host}:${opts.port}: ${(err as Error).message}`);
    return 1;
  }

  const info = describe(sim);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(info)}\n`);
  } else {
    const lines = [
      `platform simulator listening on ${info.url}`,
      `  API token        Authorization: Token ${info.apiToken}`,
      `  organization     ${info.organizationId}`,
      `  project          ${info.projectId}`,
      `  environment      ${info.environmentId}`,
      ...info.webhookIds.map((id) => `  webhook          ${id}`),
      ...info.clusterIds.map((id) => `  cluster          ${id}`),
      ...info.applications.map((a) => `  application      ${a.id}  ${a.name}`),
      "a demo deploys a random application every ~20 s; Ctrl-C stops",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  const stopDemo = startDemo(sim, { onEvent: (line) => (opts.json ? process.stderr : process.stdout).write(`${line}\n`) });

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  stopDemo();
  await sim.close();
  if (!opts.json) process.stdout.write("platform simulator stopped\n");
  return 0;
}
