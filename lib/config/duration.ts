/** Durations in configuration: `90s`, `15m`, `1h`, `400d`, or combined like `1h30m`. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * UNIT_MS[unit!]!;
  return total;
}

export function formatDuration(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface DurationRange {
  min: number;
  max: number;
}

/**
 * The range of every duration Lookout takes (docs/limits.md). Retention ends in an
 * epoch-seconds TTL attribute: ten years keeps it well inside what DynamoDB's TTL handles and what a
 * Date can hold; nothing older than that is ever stored, so no query or mute needs to reach further.
 */
export const DURATION_LIMITS = {
  "platform.timeout": { min: SECOND, max: 5 * MINUTE },
  retention: { min: DAY, max: 3650 * DAY },
  retention_routine: { min: DAY, max: 3650 * DAY },
  backfill_window: { min: MINUTE, max: 30 * DAY },
  poll_interval: { min: SECOND, max: DAY },
  "health.stalled_after": { min: MINUTE, max: 30 * DAY },
  /** A cluster incident closes after this long without an error entry, when no successful step closes it first. */
  "incidents.cluster_quiet_period": { min: MINUTE, max: 7 * DAY },
  /** `since` of an audit query, `--for` of a mute: no further than retention reaches. */
  lookback: { min: 1, max: 3650 * DAY },
} as const satisfies Record<string, DurationRange>;

/** Why `ms` is out of `range` (one phrase), or undefined when it is in it. */
export function durationRangeProblem(ms: number, range: DurationRange): string | undefined {
  if (ms >= range.min && ms <= range.max) return undefined;
  return `must be from ${formatDuration(range.min)} to ${formatDuration(range.max)}`;
}

/** A duration schema's type error for a bare number (`retention: 400`): it has no unit, said so rather than "must be a string". */
export const unitlessDuration = (iss: { input?: unknown }): string | undefined =>
  typeof iss.input === "number" ? `${iss.input} has no unit: write a duration like 90s, 15m, 1h or 400d` : undefined;
