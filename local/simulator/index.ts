/**
 * The platform simulator: an HTTP server implementing the platform's API — the endpoints and schemas of
 * lib/platform/ (those Lookout reads) and ./endpoints.ts, ./schemas.ts (the others), which follow the
 * platform's published API spec, and the service's behaviour beyond it
 * (docs/platform.md) — over an in-memory, seeded world whose clock the caller drives.
 *
 *   const sim = await startSimulator({ seed: 7 });
 *   sim.scenario.deploy(sim.ids.applicationIds[0]!, { outcome: "DEPLOYMENT_ERROR" });
 *   sim.clock.advance(120_000);
 *   await fetch(`${sim.url}/application/${id}/deploymentHistoryV2`, { headers: { Authorization: `Token ${sim.apiToken}` } });
 */
import { Authenticator, derivedSecret } from "./auth.js";
import { SimClock } from "./clock.js";
import { Faults } from "./faults.js";
import { RandomSource } from "./ids.js";
import type { Model } from "./state.js";
import { RateLimiter } from "./rate-limit.js";
import { Scenario } from "./scenario.js";
import { DEFAULT_SIZE, seedWorld, type SeededIds, type SimulatorSize } from "./seed.js";
import { SimulatorServer, type RequestLogEntry } from "./server.js";

export type { ClusterRunOptions } from "./cluster-log-runs.js";
export type { FaultSpec, FaultTarget } from "./faults.js";
export type { ActivityOptions, ActivitySummary, DeployOptions, ScenarioOptions } from "./scenario.js";
export type { SeededIds, SimulatorSize } from "./seed.js";
export type { RequestLogEntry } from "./server.js";
export type { SimClock, Faults, Scenario, Model };

export interface SimulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** PRNG seed (default 1): same seed, same ids and data. */
  seed?: number;
  size?: SimulatorSize;
  /** Simulated start instant (default 2026-01-01T00:00:00.000Z). */
  startTime?: string;
  /** When set, each token may make this many requests per simulated hour; then 429 with Retry-After. */
  rateLimit?: { requestsPerHour: number };
}

export interface Simulator {
  /** http://host:port, no trailing slash. */
  readonly url: string;
  /** For `Authorization: Token <apiToken>`; never expires. */
  readonly apiToken: string;
  /** For `Authorization: Bearer <bearerToken>`; a JWT that expires one simulated hour after start. */
  readonly bearerToken: string;
  /** A valid API token of a user without access to the seeded organization (403 there). */
  readonly outsiderToken: string;
  readonly ids: SeededIds;
  readonly clock: SimClock;
  readonly scenario: Scenario;
  readonly faults: Faults;
  readonly model: Model;
  /** Every request received, in order of arrival. */
  readonly requestLog: RequestLogEntry[];
  /** A new JWT valid `ttlMs` of simulated time from now, for the member user (or the outsider). */
  issueBearerToken(ttlMs: number, who?: "member" | "outsider"): string;
  /** Stops the server, cancels pending delays and closes every socket. */
  close(): Promise<void>;
}

export const DEFAULT_START_TIME = "2026-01-01T00:00:00.000Z";
const HOUR = 3_600_000;

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const seed = options.seed ?? 1;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  const random = new RandomSource(seed);
  const clock = new SimClock(options.startTime ?? DEFAULT_START_TIME);
  const { model, ids, apiToken, outsiderToken } = seedWorld(random, clock.nowMs(), options.size);
  const member = model.users.get(ids.userId)!;
  const scenario = new Scenario(model, clock, random, member.email);
  scenario.seedHistory(options.size?.pastDeployments ?? DEFAULT_SIZE.pastDeployments);

  const auth = new Authenticator(derivedSecret(seed, "jwt-signing-key", 64), clock, model.apiTokens);
  const faults = new Faults();
  const requestLog: RequestLogEntry[] = [];
  const server = new SimulatorServer({
    sim: { model, clock, scenario, random },
    auth,
    faults,
    rateLimiter: options.rateLimit ? new RateLimiter(options.rateLimit.requestsPerHour) : undefined,
    requestLog,
  });
  const host = options.host ?? "127.0.0.1";
  const port = await server.listen(options.port ?? 0, host);
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

  const issueBearerToken = (ttlMs: number, who: "member" | "outsider" = "member") =>
    auth.issueBearer(who === "member" ? ids.userId : ids.outsiderUserId, ttlMs);

  return {
    url: `http://${urlHost}:${port}`,
    apiToken,
    bearerToken: issueBearerToken(HOUR),
    outsiderToken,
    ids,
    clock,
    scenario,
    faults,
    model,
    requestLog,
    issueBearerToken,
    close: () => server.close(),
  };
}
