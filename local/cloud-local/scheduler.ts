/**
 * EventBridge Scheduler's `rate(…)` schedules for cloud-local (docs/cloud-local.md): the target
 * function is invoked asynchronously at the rate, the first time when the runner starts (a deployed
 * schedule's first run comes within one period of its creation). The template's schedules are rates;
 * a `cron(…)` or `at(…)` expression is refused, naming its path, rather than run at a guessed time.
 */
import { TemplateError } from "./template.js";

const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** The period of `rate(N unit[s])`, as Scheduler reads it (`rate(1 minute)`, `rate(5 minutes)`). */
export function ratePeriodMs(expression: string, path: string): number {
  const m = /^rate\((\d+)\s+(minute|minutes|hour|hours|day|days)\)$/.exec(expression.trim());
  if (!m) throw new TemplateError(path, `${JSON.stringify(expression)}: cloud-local runs rate(N minutes|hours|days) schedules only`);
  const n = Number(m[1]);
  const unit = m[2]!.replace(/s$/, "");
  if (n < 1 || (n === 1) !== (m[2] === unit)) throw new TemplateError(path, `${JSON.stringify(expression)}: not a valid rate (rate(1 minute), rate(2 minutes))`);
  return n * UNIT_MS[unit]!;
}

export interface RunningSchedule {
  /** Fires now, besides the rate (tests and `settle` drive time themselves). */
  fire(): void;
  stop(): void;
}

/** Calls `fire` now and then every `periodMs` until stopped; when not `running`, only when fired. */
export function runSchedule(periodMs: number, fire: () => void, opts: { running?: boolean } = {}): RunningSchedule {
  if (opts.running === false) return { fire, stop: () => undefined };
  fire();
  const timer = setInterval(fire, periodMs);
  return { fire, stop: () => clearInterval(timer) };
}
