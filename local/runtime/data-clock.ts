/**
 * The clock a data folder's times were written on, when it was not the wall clock: the embedded demo's
 * simulated platform runs DEMO_SPEED times real time, so its data is dated ahead of the wall clock. The
 * demo keeps its clock beside its data (`clock.json`), and the commands that read the folder afterwards
 * (`lookout status`, `audit`, `report`) read it on that clock: otherwise its last poll would be "in 9
 * minutes" and a report would cut its incidents off at the wall clock's now. The demo writes it every few
 * seconds at the wall clock's pace, so a demo that was killed leaves a clock that keeps that pace.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const CLOCK_FILE = "clock.json";

/** The folder's clock read `at` when the wall clock read `wall_at`, running `speed` times as fast since. */
export interface DataClock {
  at: string;
  wall_at: string;
  speed: number;
}

/** Written whole or not at all, never throwing: a folder that cannot take it (removed, full) must not stop the demo. */
export function writeDataClock(dataDir: string, clock: { at: Date; speed: number }, wallNow: Date = new Date()): void {
  const c: DataClock = { at: clock.at.toISOString(), wall_at: wallNow.toISOString(), speed: clock.speed };
  const file = join(dataDir, CLOCK_FILE);
  try {
    writeFileSync(`${file}.tmp`, `${JSON.stringify(c)}\n`);
    renameSync(`${file}.tmp`, file);
  } catch {
    // The readers then read the folder on the wall clock, or on the clock last written.
  }
}

/** The folder's clock now, or undefined for a folder written on the wall clock (or a clock file that cannot be read). */
export function dataClockNow(dataDir: string, wallNow: number = Date.now()): number | undefined {
  let c: Partial<DataClock>;
  try {
    c = JSON.parse(readFileSync(join(dataDir, CLOCK_FILE), "utf8")) as Partial<DataClock>;
  } catch {
    return undefined;
  }
  const at = Date.parse(c.at ?? "");
  const wallAt = Date.parse(c.wall_at ?? "");
  if (!Number.isFinite(at) || !Number.isFinite(wallAt) || typeof c.speed !== "number" || !(c.speed > 0)) return undefined;
  return at + (wallNow - wallAt) * c.speed;
}

/** The line a command says when it reads a folder on its own clock (to stderr: JSON output stays whole). */
export function dataClockLine(dataNow: number, wallNow: number = Date.now()): string {
  const minutes = Math.round((dataNow - wallNow) / 60_000);
  const ahead = minutes === 0 ? "the same minute as yours" : `${Math.abs(minutes)} min ${minutes > 0 ? "ahead of" : "behind"} yours`;
  return `lookout: this folder's data was written on the demo's clock, read on it: ${new Date(dataNow).toISOString().slice(0, 19).replace("T", " ")} UTC there, ${ahead}`;
}
