/**
 * The simulated clock. The simulator never reads wall time for its data: tests move this clock and the
 * scenario engine catches up (deployments advance, webhook deliveries are recorded) on every change.
 */
export class SimClock {
  private ms: number;
  private readonly listeners: Array<(now: Date) => void> = [];

  constructor(startIso: string) {
    this.ms = parseIso(startIso);
  }

  now(): Date {
    return new Date(this.ms);
  }

  nowMs(): number {
    return this.ms;
  }

  nowIso(): string {
    return new Date(this.ms).toISOString();
  }

  advance(ms: number): Date {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`clock.advance: ms must be a finite number >= 0, got ${ms}`);
    return this.moveTo(this.ms + ms);
  }

  /** Moves to an instant; moving backwards is allowed (records already created stay as they are). */
  set(iso: string | Date): Date {
    return this.moveTo(typeof iso === "string" ? parseIso(iso) : iso.getTime());
  }

  onChange(listener: (now: Date) => void): void {
    this.listeners.push(listener);
  }

  private moveTo(ms: number): Date {
    this.ms = ms;
    const now = this.now();
    for (const l of this.listeners) l(now);
    return now;
  }
}

function parseIso(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new RangeError(`not an ISO date-time: ${iso}`);
  return ms;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** ISO 8601 duration as the platform prints it, e.g. PT1M40S, PT2H0M5S; never negative. */
export function isoDuration(ms: number): string {
  let s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `PT${h}H${m}M${s}S`;
  if (m > 0) return `PT${m}M${s}S`;
  return `PT${s}S`;
}

/** An ISO timestamp with nanosecond precision (cluster logs): the ms of `ms` plus 6 more digits. */
export function nanoIso(ms: number, extraNanos: number): string {
  const base = new Date(ms).toISOString(); // 2026-01-01T00:00:00.123Z
  return `${base.slice(0, -1)}${String(extraNanos % 1_000_000).padStart(6, "0")}Z`;
}
