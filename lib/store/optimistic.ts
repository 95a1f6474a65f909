/**
 * Optimistic locking's retry loop, shared by every store that writes under a version check: read,
 * decide, write on condition; when someone else wrote in between, read again and decide again.
 */

/** What an attempt returns when its conditional write lost a race: worth reading again. */
export const LOST_RACE: unique symbol = Symbol("lost race");

export interface RetryOptions {
  /** Attempts before giving up. */
  attempts: number;
  /** Named in the error when every attempt lost its race. */
  what: string;
  /** Waited after a lost race (attempt counted from 0); none when absent. */
  pause?: (attempt: number) => Promise<void>;
}

/** Runs `attempt` until it returns anything but LOST_RACE, at most `attempts` times. */
export async function retryLostRaces<T>(opts: RetryOptions, attempt: (n: number) => Promise<T | typeof LOST_RACE>): Promise<T> {
  for (let n = 0; n < opts.attempts; n++) {
    const outcome = await attempt(n);
    if (outcome !== LOST_RACE) return outcome;
    await opts.pause?.(n);
  }
  throw new Error(`${opts.what}: too much contention, gave up after ${opts.attempts} attempts`);
}

/** A little random wait, growing with the attempt: writers finishing together do not collide in lockstep. */
export const jitter = (attempt: number): Promise<void> =>
  new Promise((r) => setTimeout(r, Math.random() * 10 * (attempt + 1)));

/** A value as read with its version; absent when nothing is stored. */
export interface Versioned<S> {
  state: S;
  version: number;
}

/**
 * Reads a versioned value, applies `fn` and writes its result on the version read (`write` is false
 * when someone wrote since); nothing is written when `fn` returns undefined. `fn` may run again.
 */
export function updateOnVersion<S>(
  opts: RetryOptions,
  io: { read(): Promise<Versioned<S> | undefined>; write(next: S, readVersion: number | undefined): Promise<boolean> },
  fn: (current: S | undefined) => S | undefined,
): Promise<{ state: S | undefined; written: boolean }> {
  return retryLostRaces(opts, async () => {
    const current = await io.read();
    const next = fn(current?.state);
    if (!next) return { state: current?.state, written: false };
    return (await io.write(next, current?.version)) ? { state: next, written: true } : LOST_RACE;
  });
}

/**
 * Named states, each read and written on its version: `get` and `update` for an adapter that supplies
 * the read and the conditional write (a lost race is read again, after a little jitter).
 */
export abstract class VersionedStates<S> {
  protected constructor(
    private readonly what: string,
    private readonly attempts = 20,
  ) {}

  protected abstract read(name: string): Promise<Versioned<S> | undefined>;
  /** Writes `next` if the stored version is still `readVersion`; false when someone wrote since. */
  protected abstract write(name: string, next: S, readVersion: number | undefined): Promise<boolean>;

  async get(name: string): Promise<S | undefined> {
    return (await this.read(name))?.state;
  }

  update(name: string, fn: (current: S | undefined) => S | undefined): Promise<{ state: S | undefined; written: boolean }> {
    const opts = { attempts: this.attempts, what: `${this.what} ${name}`, pause: jitter };
    return updateOnVersion(opts, { read: () => this.read(name), write: (next, version) => this.write(name, next, version) }, fn);
  }
}
