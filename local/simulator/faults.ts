/**
 * Fault injection per endpoint. A fault applies to the next `times` matching requests (all of them until
 * cleared when `times` is absent). An endpoint's own fault wins over the `"*"` one.
 */
import type { SpecEndpointName as EndpointName } from "./endpoints.js";

export interface FaultSpec {
  /** How many requests it applies to; absent: until cleared. */
  times?: number;
  /** Wall-clock delay before answering (the only use of wall time: client timeout tests). */
  delayMs?: number;
  /** Answer this status instead (429, 500, 502, 503, 504, ...), with the standard error body unless `body` is given. */
  status?: number;
  /** Retry-After header of the answer: seconds or an HTTP-date. */
  retryAfter?: number | string;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Answer 200 with a broken body. */
  malformed?: "truncated" | "not-json" | "html";
  /** Answer with this JSON body (status: `status`, else the endpoint's success status, 200 for 204). */
  body?: unknown;
  /** Answer 200 with this text as it is, labelled JSON (fuzzing: any bytes the platform might send). */
  rawBody?: string;
  /** Destroy the socket without answering (a network error for the client). */
  drop?: boolean;
}

export type FaultTarget = EndpointName | "*";

export class Faults {
  private readonly table = new Map<FaultTarget, FaultSpec & { remaining: number }>();

  set(target: FaultTarget, fault: FaultSpec): void {
    const times = fault.times ?? Number.POSITIVE_INFINITY;
    if (!(times >= 1)) throw new RangeError(`fault.times must be >= 1, got ${fault.times}`);
    if (fault.delayMs !== undefined && !(fault.delayMs >= 0)) throw new RangeError("fault.delayMs must be >= 0");
    this.table.set(target, { ...fault, remaining: times });
  }

  /** Clears one target's fault, or all of them. */
  clear(target?: FaultTarget): void {
    if (target) this.table.delete(target);
    else this.table.clear();
  }

  /** The faults in force, with how many requests each still applies to. */
  active(): Array<{ target: FaultTarget; fault: FaultSpec; remaining: number }> {
    return [...this.table].map(([target, { remaining, ...fault }]) => ({ target, fault, remaining }));
  }

  /** Takes the fault that applies to one request of `endpoint`, if any, and counts it. */
  take(endpoint: EndpointName): FaultSpec | undefined {
    const target: FaultTarget | undefined = this.table.has(endpoint) ? endpoint : this.table.has("*") ? "*" : undefined;
    if (!target) return undefined;
    const entry = this.table.get(target)!;
    entry.remaining -= 1;
    if (entry.remaining <= 0) this.table.delete(target);
    const { remaining: _, ...fault } = entry;
    return fault;
  }
}
