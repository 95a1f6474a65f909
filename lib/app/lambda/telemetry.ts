/** One Logger and one Metrics per function, shared by its handler and its services. */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics } from "@aws-lambda-powertools/metrics";

export interface Telemetry {
  logger: Logger;
  metrics: Metrics;
}

export const serviceName = (fn: string) => `lookout-${fn}`;

/** A function that counts nothing of its own: its Logger alone (no Metrics built, nor loaded). */
export const loggerOr = (fn: string, given?: Logger): Logger => given ?? new Logger({ serviceName: serviceName(fn) });

/** What a handler was given, the rest its own: `lookout-<function>` as the service name, metrics in the Lookout namespace. */
export function telemetryOr(fn: string, given: Partial<Telemetry> = {}): Telemetry {
  return {
    logger: loggerOr(fn, given.logger),
    metrics: given.metrics ?? new Metrics({ namespace: "Lookout", serviceName: serviceName(fn) }),
  };
}

export const telemetry = (fn: string): Telemetry => telemetryOr(fn);

/** A handler's dependencies, given, or built on an invocation (the cloud's are built once: lib/app/cloud). */
export type Deps<T> = T | (() => T | Promise<T>);
export const resolveDeps = async <T extends object>(deps: Deps<T>): Promise<T> => (typeof deps === "function" ? await (deps as () => T | Promise<T>)() : deps);
